import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

/// A running `herald serve` or `herald console`, its URL read from its first lines of stdout.
/// Stopped by ``stop()`` (SIGTERM), or killed when dropped still running.
final class HeraldProcess: Sendable {
    let process: Process
    let port: Int

    /// `herald serve` on `port` (0: a free one) with `token` as its admin token.
    static func serve(store: String, port: Int = 0, token: String) throws -> HeraldProcess {
        try HeraldProcess(
            ["serve", "--store", store, "--listen", "127.0.0.1:\(port)", "--log-level", "warning", "--snapshot-seconds", "0"],
            environment: ["HERALD_ADMIN_TOKEN": token], marker: "listening on")
    }

    /// `herald console` over `store` on a free port.
    static func console(store: String) throws -> HeraldProcess {
        try HeraldProcess(["console", "--store", store, "--listen", "127.0.0.1:0"], environment: [:], marker: "herald console: http://")
    }

    init(_ arguments: [String], environment: [String: String], marker: String) throws {
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
        while port == 0 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            let lines = String(decoding: pending, as: UTF8.self).split(separator: "\n")
            if let line = lines.first(where: { $0.contains(marker) }) {
                // `…127.0.0.1:PORT…`: the digits after the address.
                let after = line.range(of: "127.0.0.1:").map { line[$0.upperBound...] } ?? ""
                port = Int(after.prefix { $0.isNumber }) ?? 0
            }
        }
        self.port = port
        if port == 0 { stopNow() }
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// SIGTERM, and the exit status.
    @discardableResult
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
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

/// An HTTP client that does not follow redirects, and a request helper.
enum Plain {
    static func get(_ url: String, headers: [(String, String)] = []) async throws -> (status: Int, location: String?, body: String) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            var request = HTTPClientRequest(url: url)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(20))
            // An update stream does not end: read only its start.
            let body = response.headers.first(name: "Content-Type") == "text/event-stream" ? ByteBuffer() : try await response.body.collect(upTo: 8 << 20)
            try await client.shutdown()
            return (Int(response.status.code), response.headers.first(name: "Location"), String(buffer: body))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// POSTs `body` with the bearer `token`; returns the status and the reply's body. On a
    /// connection of its own (`Connection: close`): a pooled one may be to a server that a
    /// test has just restarted on the same port ("I/O on closed channel", seen in a loaded run).
    static func post(_ url: String, token: String, _ body: String) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Connection", value: "close")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(20))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }
}

/// Runs `herald ARGUMENTS`; returns its status and output.
@discardableResult
func herald(_ arguments: [String]) throws -> (status: Int32, output: String) {
    try run(HeraldBinary.path, arguments)
}

/// The SHA-256-free fingerprint of every file under `path`: relative path → bytes.
func contents(of path: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
        var directory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &directory), !directory.boolValue else { continue }
        result[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
    }
    return result
}

/// Copies a screenshot into `$HERALD_CONSOLE_SCREENSHOTS` when set (Tools/console-screenshots.sh).
func keepScreenshot(_ path: String) {
    guard let folder = ProcessInfo.processInfo.environment["HERALD_CONSOLE_SCREENSHOTS"], !folder.isEmpty else { return }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let target = folder + "/" + URL(fileURLWithPath: path).lastPathComponent
    try? FileManager.default.removeItem(atPath: target)
    try? FileManager.default.copyItem(atPath: path, toPath: target)
}
