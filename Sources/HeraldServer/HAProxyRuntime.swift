import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an account's requests go when HAProxy routes by account: a map file (`ACCOUNT
/// BACKEND` lines) that the configuration's `use_backend` consults before the consistent
/// hash (see `Tools/haproxy.cfg`), and the runtime API socket (`stats socket … level
/// admin`) through which a running HAProxy takes a change without a reload.
public struct HAProxyRouting: Sendable, Hashable {
    /// The runtime API's Unix socket.
    public var socketPath: String
    /// The map file, as named in the configuration (HAProxy names maps by their path).
    public var mapPath: String

    /// Routing through `socketPath` and `mapPath`.
    public init(socketPath: String, mapPath: String) {
        self.socketPath = socketPath
        self.mapPath = mapPath
    }

    /// Sends `account`'s requests to `backend` from now on: the running HAProxy's map first
    /// (`set map`, or `add map` for a new key), then the file, so a reload keeps it.
    public func pin(account: String, to backend: String) async throws {
        let answer = try await command("set map \(mapPath) \(account) \(backend)")
        if !answer.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            let added = try await command("add map \(mapPath) \(account) \(backend)")
            guard added.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw ServerError(.badGateway, field: "haproxy", "add map \(mapPath): \(added)")
            }
        }
        try rewriteFile(account: account, backend: backend)
    }

    /// The map file with `account`'s line replaced (or added), written to a temporary file
    /// and renamed over it.
    func rewriteFile(account: String, backend: String) throws {
        let existing = (try? String(contentsOfFile: mapPath, encoding: .utf8)) ?? ""
        var lines = existing.split(separator: "\n").map(String.init).filter { line in
            line.split(separator: " ", maxSplits: 1).first.map(String.init) != account
        }
        lines.append("\(account) \(backend)")
        let temporary = mapPath + ".tmp"
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, mapPath) == 0 else {
            throw ServerError(.internalServerError, field: "map", "rename \(temporary): \(String(cString: strerror(errno)))")
        }
    }

    /// One runtime API command, on a thread of its own (the socket calls block); returns
    /// HAProxy's answer (empty for success of `set map` and `add map`).
    public func command(_ line: String) async throws -> String {
        let path = socketPath
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.exchange(line, socketPath: path) }) }.start()
        }
    }

    private static func exchange(_ line: String, socketPath: String) throws -> String {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket", socketPath) }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard socketPath.utf8.count < capacity else { throw ServerError(.badRequest, field: "socket", "path too long: \(socketPath)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: socketPath.utf8)
            raw[socketPath.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw failure("connect", socketPath) }
        let request = Array((line + "\n").utf8)
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw failure("write", socketPath) }
            sent += count
        }
        // HAProxy answers and closes the connection (non-interactive mode).
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { throw failure("read", socketPath) }
            if count == 0 { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    private static func failure(_ operation: String, _ path: String) -> ServerError {
        ServerError(.badGateway, field: "haproxy", "\(operation) \(path): \(String(cString: strerror(errno)))")
    }
}
