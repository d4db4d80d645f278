import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A running `herald serve` or `herald console`, its URL read from its first lines of stdout.
/// Stopped by ``stop()`` (SIGTERM), or killed when dropped still running.
public final class HeraldProcess: Sendable {
    public let process: Process
    public let port: Int
    /// The lines of stdout read until the port showed (`herald serve` prints its admin token
    /// there).
    public let lines: [String]

    /// `herald serve` on `port` (0: a free one) with `token` as its admin token.
    public static func serve(store: String, port: Int = 0, token: String) throws -> HeraldProcess {
        try HeraldProcess(
            ["serve", "--store", store, "--listen", "127.0.0.1:\(port)", "--log-level", "warning", "--snapshot-seconds", "0"],
            environment: ["HERALD_ADMIN_TOKEN": token], marker: "listening on")
    }

    /// `herald console` over `store` on a free port.
    public static func console(store: String) throws -> HeraldProcess {
        try HeraldProcess(["console", "--store", store, "--listen", "127.0.0.1:0"], environment: [:], marker: "herald console: http://")
    }

    /// `herald arguments…` with `environment` added to this process's (less its
    /// `HERALD_ADMIN_TOKEN`), its port read from the first stdout line holding `marker`.
    public init(_ arguments: [String], environment: [String: String], marker: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: HeraldBinary.path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HERALD_ADMIN_TOKEN")
        env["HERALD_CACHE_DIR"] = ""
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        var pending = Data()
        var port = 0
        var lines: [String] = []
        while port == 0 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            lines = String(decoding: pending, as: UTF8.self).split(separator: "\n").map(String.init)
            if let line = lines.first(where: { $0.contains(marker) }) {
                // `…127.0.0.1:PORT…`: the digits after the address.
                let after = line.range(of: "127.0.0.1:").map { line[$0.upperBound...] } ?? ""
                port = Int(after.prefix { $0.isNumber }) ?? 0
            }
        }
        self.port = port
        self.lines = lines
        if port == 0 { stopNow() }
    }

    public var base: String { "http://127.0.0.1:\(port)" }

    /// SIGTERM, and the exit status.
    @discardableResult
    public func stop() -> Int32 { signal(SIGTERM) }

    /// Sends `signal` (if it still runs), waits for the exit and returns its status.
    @discardableResult
    public func signal(_ signal: Int32) -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func stopNow() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stopNow() }
}
