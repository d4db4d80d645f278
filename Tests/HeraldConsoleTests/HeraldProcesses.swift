import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

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
