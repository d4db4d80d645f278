import Foundation
import HeraldTestSupport

/// Runs the built `herald` binary.
enum CLI {
    /// The `herald` executable (``HeraldBinary``).
    static let executable = HeraldBinary.path

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `herald arguments…` with `input` on stdin, and waits for it; with a `launcher`
    /// (such as `setpriv` and its options), runs `launcher… herald arguments…`; in
    /// `currentDirectory` when one is given.
    @discardableResult
    static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:], launcher: [String] = [],
        currentDirectory: String? = nil
    ) throws -> Result {
        let process = Process()
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HERALD_STORE")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        if let input { try inp.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        // Read both pipes concurrently so neither fills up and blocks the child.
        nonisolated(unsafe) var errData = Data()
        let errReader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errReader.isFinished { usleep(1_000) }
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

extension CLI {
    /// `herald arguments…` started with pipes on stdin and stdout (stderr discarded), to be
    /// fed and read while it runs.
    static func start(_ arguments: [String]) throws -> (process: Process, input: FileHandle, output: FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, input.fileHandleForWriting, output.fileHandleForReading)
    }

    /// Reads `output` into `text` until `text` contains `wanted` or the output ends.
    static func read(_ output: FileHandle, into text: inout String, until wanted: String) {
        while !text.contains(wanted) {
            let chunk = output.availableData
            if chunk.isEmpty { return }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }
}

/// The spec folder and payloads the CLI tests read: the repository's copies (`Fixtures`).
enum Shared {
    static func path(_ relative: String) -> String { Fixtures.path(relative) }

    static var conformanceCases: [String] { Fixtures.conformanceCases }

    static func json(_ text: some StringProtocol) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! NSObject
    }

    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }
}
