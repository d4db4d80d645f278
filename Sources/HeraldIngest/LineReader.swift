import Crypto
import Foundation

/// Reads a file or standard input line by line, in large chunks, without decoding text.
/// A trailing `\r` is dropped, so CRLF files read like LF files.
///
/// Memory stays bounded whatever the input: a line longer than ``lineLimit`` is never held
/// whole. The reader streams past it, hashing it, and returns its first ``keptPrefix`` bytes
/// in its place, with its full size and SHA-256 digest in ``overlong``.
package struct LineReader {
    /// The longest line held whole: the largest payload ingest accepts.
    package static let lineLimit = Ingest.maxPayloadBytes
    /// How much of a longer line is returned (and so kept in the quarantine).
    package static let keptPrefix = 64 << 10

    /// A line longer than ``lineLimit``: its number, full size and SHA-256 (hex).
    package struct Overlong: Sendable, Hashable {
        package var line: Int
        package var size: Int
        package var digest: String
    }

    /// Why the input could not be opened or read: its name, what failed and the system's
    /// reason (`strerror`).
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The input's name (``LineReader/name``).
        package var input: String
        /// `cannot open` or `read failed`.
        package var operation: String
        /// The system's message for the error number.
        package var reason: String

        /// `INPUT: OPERATION: REASON`.
        package var description: String { "\(input): \(operation): \(reason)" }
    }

    /// The lines returned that were longer than ``lineLimit`` (what was returned is their
    /// prefix), by line number, until ``takeOverlong(line:)`` takes them.
    private var overlongLines: [Int: Overlong] = [:]

    /// The facts of line `line` when it was longer than ``lineLimit``, once.
    package mutating func takeOverlong(line: Int) -> Overlong? {
        overlongLines.removeValue(forKey: line)
    }
    /// Where the search for the next newline resumes: bytes before it hold none.
    private var searched = 0
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    /// What each read fills, before its bytes are appended to ``buffer``.
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var atEnd = false
    /// The number of the line last returned, from 1.
    package private(set) var lineNumber = 0
    /// The name used in messages: the path, or `-` for standard input.
    package let name: String
    /// Bytes read so far, and the input's size when it is a regular file (for progress).
    package private(set) var bytesRead = 0
    package private(set) var totalBytes: Int?

    /// Opens `path`, or standard input for `-`.
    ///
    /// - Throws: ``Failure`` (`cannot open`) when the file cannot be opened.
    package init(path: String) throws(Failure) {
        name = path
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw Failure(input: path, operation: "cannot open", reason: String(cString: strerror(errno)))
            }
            ownsDescriptor = true
        }
        buffer.reserveCapacity(1 << 20)
        var status = stat()
        if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0 {
            totalBytes = Int(status.st_size)
        }
    }

    /// Closes the file (standard input stays open).
    package func close() {
        if ownsDescriptor { _ = Foundation.close(descriptor) }
    }

    /// The next line, without its terminator, or `nil` at the end of input.
    ///
    /// Before it waits for input that has not arrived yet (a pipe or terminal whose writer
    /// is slower than the reader), it calls `idle`: a live stream's reader can commit what it
    /// has read instead of holding it until more comes. A regular file never waits.
    /// - Throws: ``Failure`` (`read failed`), or what `idle` throws.
    package mutating func next(whenIdle idle: () throws -> Void = {}) throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[max(start, searched)...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = buffer[start..<end]
                start = newline + 1
                searched = start
                lineNumber += 1
                return line
            }
            searched = buffer.count
            if buffer.count - start > Self.lineLimit { return try skipOverlongLine() }
            if atEnd {
                guard start < buffer.count else { return nil }
                var end = buffer.count
                if buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = buffer[start..<end]
                start = buffer.count
                lineNumber += 1
                return line
            }
            if !hasInputReady() { try idle() }
            try fill()
        }
    }

    /// Streams past the rest of a line that has outgrown ``lineLimit``: hashes it without
    /// keeping it, and returns its first ``keptPrefix`` bytes, with ``overlong`` set.
    private mutating func skipOverlongLine() throws -> ArraySlice<UInt8> {
        let prefix = Array(buffer[start..<start + Self.keptPrefix])
        var hasher = SHA256()
        var size = 0
        var lastByte: UInt8 = 0
        func take(_ bytes: ArraySlice<UInt8>) {
            hasher.update(data: bytes)
            size += bytes.count
            if let last = bytes.last { lastByte = last }
        }
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                take(buffer[start..<newline])
                start = newline + 1
                break
            }
            take(buffer[start...])
            start = buffer.count
            if atEnd { break }
            try fill()
        }
        // Dropped after the fact, as for any line: a trailing `\r` is the terminator's.
        if lastByte == UInt8(ascii: "\r") { size -= 1 }
        searched = start
        lineNumber += 1
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        overlongLines[lineNumber] = Overlong(line: lineNumber, size: size, digest: digest)
        return prefix[...]
    }

    /// Whether a read would return at once (bytes, the end of input, or an error) rather
    /// than wait.
    private func hasInputReady() -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&request, 1, 0) != 0
    }

    private mutating func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            searched -= min(searched, start)
            start = 0
        }
        // Read into a fixed chunk and append what came: a pipe gives 64 KiB at a time, and
        // growing the buffer by a whole chunk for each read costs more than the read.
        let n = chunk.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress!, raw.count) }
        if n < 0 {
            let code = errno
            throw Failure(input: name, operation: "read failed", reason: String(cString: strerror(code)))
        }
        buffer.append(contentsOf: chunk[..<n])
        bytesRead += n
        if n == 0 { atEnd = true }
    }
}
