import AsyncHTTPClient
import Foundation
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// A real `HeraldServer` on a free loopback port, over a real store in `directory`, driven
/// through a real HTTP client. ``stop()`` cancels it and waits until the store is closed, so
/// a second server can open the same directory (a restart).
///
/// The server runs on ``ThreadExecutor/servers``, not the cooperative pool, so that tests
/// which block the pool's threads elsewhere in the run do not hold up its answers.
final class LiveServer: Sendable {
    static let adminToken = "test-admin-token"
    /// How long a test's request may take: generous, since a loaded CI machine can be slow
    /// to sync a file or schedule a thread; a request that hangs still fails, later.
    static let requestTimeout: TimeAmount = .seconds(120)

    let server: HeraldServer
    let port: Int
    private let task: Task<Void, any Error>

    /// Starts a server on the store at `path`.
    init(path: String, configure: (inout ServerConfiguration) -> Void = { _ in }) async throws {
        var configuration = ServerConfiguration(storePath: path)
        configuration.port = 0
        configuration.adminToken = Self.adminToken
        configuration.storeThreads = 16
        configuration.snapshotSeconds = 0
        configuration.logger = Logger(label: "herald.serve.test", factory: { _ in SwiftLogNoOpLogHandler() })
        configure(&configuration)
        let server = try HeraldServer(configuration: configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        task = Task(executorPreference: ThreadExecutor.servers) {
            defer { continuation.finish() }
            try await server.run(gracefulShutdownSignals: []) { port in continuation.yield(port) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await task.value
            throw CancellationError()
        }
        self.server = server
        self.port = port
    }

    /// Stops the server and waits until it has closed the store; records an issue (and
    /// returns) if that takes over two minutes, so that a server that cannot stop fails its
    /// test by name instead of holding up the run.
    func stop() async {
        task.cancel()
        let task = self.task
        let answer = FirstAnswer()
        var timer: Task<Void, Never>?
        let stopped = await withCheckedContinuation { continuation in
            answer.set(continuation)
            Task(executorPreference: ThreadExecutor.servers) {
                _ = try? await task.value
                answer.resume(true)
            }
            timer = Task(executorPreference: ThreadExecutor.servers) {
                try? await Task.sleep(for: .seconds(120))
                answer.resume(false)
            }
        }
        timer?.cancel()
        if !stopped { Issue.record("the server on port \(port) did not stop within 120 s") }
    }

    /// A continuation resumed by whichever of two tasks answers first.
    private final class FirstAnswer: Sendable {
        private let continuation = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        func set(_ value: CheckedContinuation<Bool, Never>) { continuation.withLock { $0 = value } }
        func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// One request with a binary body and no token.
    func requestBytes(
        _ method: HTTPMethod, _ path: String, body: [UInt8], headers extra: [(String, String)] = []
    ) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }

    /// One request; returns the status, the body as text and the headers.
    func request(
        _ method: HTTPMethod, _ path: String, body: String? = nil, token: String? = LiveServer.adminToken,
        headers extra: [(String, String)] = []
    ) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), String(buffer: bytes), response.headers)
    }
}

/// JSON of a response body, as a dictionary.
func object(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}

/// A canonical notify event line.
func notifyLine(account: String = "tg:1", chat: String = "user:5", id: Int, body: String = "hi") -> String {
    #"{"type":"notify","account":"\#(account)","chat":"\#(chat)","kind":"message","id":\#(id),"date":\#(1_754_385_290 + id),"title":"Alice","body":"\#(body)"}"#
}
