import Foundation

/// A fresh directory under the system's temporary folder, removed when the value dies: every
/// test that touches files (LMDB environments, stores, CLI runs) works in one.
///
/// Each one is also the ``HangWatchdog``'s record that the test which made it is running.
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String

    /// Creates the directory, named `name` and a UUID.
    public init(_ name: String = "herald-test", fileID: String = #fileID, line: Int = #line) {
        path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        HangWatchdog.shared.begin(path, at: "\(fileID):\(line)")
    }

    /// A path inside the directory (not created).
    public func child(_ name: String) -> String { path + "/" + name }

    deinit {
        HangWatchdog.shared.end(path)
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs a program and returns its exit status and its standard output and error, together.
public func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
