import AsyncHTTPClient
import Crypto
import Foundation
@testable import HeraldIngest
import HeraldStore
@testable import HeraldServer
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// The per-endpoint rate limit of the unauthenticated push routes (`herald.ratelimit.endpoint.*`).
@Suite("serve: rate limits of the push endpoints", .serverThreads)
struct EndpointRateLimitTests {
    @Test("a Web Push subscription and a Matrix pushkey over their burst get 429 with Retry-After; other endpoints are not held up; nothing stored")
    func limited() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) {
            $0.endpointRequestsPerSecond = 1
            $0.endpointBurst = 2
        }
        var tokens: [String] = []
        for account in ["tg:1", "tg:2"] {
            let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"\#(account)"}"#)
            tokens.append(String((object(created.body)["endpoint"] as? String ?? "").dropFirst("/push/".count)))
        }
        func push(_ token: String, _ id: Int, body: [UInt8]? = nil) async throws -> (status: Int, body: String, headers: [(String, String)]) {
            var request = HTTPClientRequest(url: server.base + "/push/" + token)
            request.method = .POST
            request.headers.add(name: "Content-Encoding", value: "aes128gcm")
            request.body = .bytes(ByteBuffer(bytes: try body ?? VAPIDTests.body(server, token: token, id: id)))
            let response = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: bytes), response.headers.map { ($0.name, $0.value) })
        }
        // Pushes as fast as they go until one is refused: the burst (2) and at most one per
        // second since the first (a loaded machine may take a while per push) get through.
        let bodies = try (1...20).map { try VAPIDTests.body(server, token: tokens[0], id: $0) }
        let started = ContinuousClock.now
        var accepted = 0
        var refused = (status: 0, body: "", headers: [(String, String)]())
        for (index, body) in bodies.enumerated() {
            let response = try await push(tokens[0], index + 1, body: body)
            guard response.status == 201 else {
                refused = response
                break
            }
            accepted += 1
        }
        let elapsed = ContinuousClock.now - started
        #expect(refused.status == 429, "\(refused.body)")
        #expect(accepted >= 2 && Double(accepted) <= 2 + elapsed / .seconds(1) + 1, "\(accepted) in \(elapsed)")
        #expect(refused.headers.first { $0.0.lowercased() == "retry-after" }?.1 == "1")
        #expect(refused.body.contains("over 1 requests per second"))
        // Another subscription has its own bucket.
        #expect(try await push(tokens[1], 1).status == 201)

        #expect(try await server.request(.POST, "/v1/admin/pushkeys", body: #"{"pushkey":"pk-synapse","account":"mx:@a:x"}"#).status == 201)
        func notify(_ event: Int) -> String {
            MatrixGatewayTests.synapsePush(event: "$e\(event)", room: "!r:x", sender: "@b:x", body: "n\(event)", badge: event)
        }
        var notified = 0
        var matrixRefused = (status: 0, body: "", headers: HTTPHeaders())
        for event in 1...20 {
            let response = try await server.request(.POST, "/_matrix/push/v1/notify", body: notify(event), token: nil)
            guard response.status == 200 else {
                matrixRefused = response
                break
            }
            notified += 1
        }
        #expect(notified >= 2)
        #expect(matrixRefused.status == 429 && matrixRefused.headers["Retry-After"].first == "1", "\(matrixRefused.body)")
        // Unregistered pushkeys spend no bucket: they are rejected as before.
        let unknown = try await server.request(.POST, "/_matrix/push/v1/notify", body: MatrixGatewayTests.notify(pushkeys: ["nobody"]), token: nil)
        #expect(unknown.status == 200 && unknown.body.contains("nobody"))

        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains(#"herald_endpoint_rate_limited_total{route="/push/{token}"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"herald_endpoint_rate_limited_total{route="/_matrix/push/v1/notify"} 1"#))
        // A second later the bucket holds one request again.
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await push(tokens[0], 30).status == 201)
        await server.stop()

        let store = try Store(path: directory.path)
        #expect(try await store.history.records().filter { $0.source.format == "webpush" }.count == accepted + 2)
        // Two notifies stored (each may make several records, all with its body's digest), the third not.
        #expect(Set(try await store.history.records().filter { $0.source.format == "matrix" }.compactMap(\.source.digest)).count == notified)
        #expect(try store.quarantine.all().isEmpty)
    }

    @Test("buckets refill at the rate up to the burst; without a rate nothing is limited")
    func buckets() {
        let start = ContinuousClock.now
        let limited = TokenBuckets(rate: 2, burst: 3)
        #expect((0..<3).allSatisfy { _ in limited.take("a", now: start) == nil })
        #expect(limited.take("a", now: start) == 1)
        #expect(limited.take("b", now: start) == nil)
        #expect(limited.take("a", now: start + .milliseconds(500)) == nil)
        #expect(limited.take("a", now: start + .milliseconds(500)) != nil)
        #expect((0..<3).allSatisfy { _ in limited.take("a", now: start + .seconds(60)) == nil })
        let open = TokenBuckets(rate: 0, burst: 1)
        #expect((0..<1000).allSatisfy { _ in open.take("a") == nil })
    }
}
