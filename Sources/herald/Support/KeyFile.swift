import ArgumentParser
import Foundation

/// Reads secrets (Telegram auth keys, base64url) from a file or standard input, so that a
/// key, an account credential, never has to appear on a command line (where `ps` and shell
/// history show it).
enum KeyFile {
    /// The non-blank lines of `path` (`-`: standard input), trimmed; at most 1 MiB is read.
    static func keys(from path: String, option: String) throws -> [String] {
        let data: Data?
        if path == "-" {
            data = try FileHandle.standardInput.read(upToCount: (1 << 20) + 1) ?? Data()
        } else {
            data = FileManager.default.contents(atPath: path)
        }
        guard let data else { throw ValidationError("\(option) \(path): cannot be read") }
        guard data.count <= 1 << 20 else { throw ValidationError("\(option) \(path): over 1 MiB, not a key file") }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
