import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldServer

/// Bearer tokens, scopes and the open endpoints.
@Suite("serve: access", .serverThreads)
struct AccessTests {
    @Test("the bearer token is read from the header whatever the scheme's case, blanks around it ignored")
    func bearerParsing() {
        #expect(TokenAuthority.bearerToken("Bearer abc") == "abc")
        #expect(TokenAuthority.bearerToken("bEaReR   abc \t") == "abc")
        #expect(TokenAuthority.bearerToken("Bearer ") == nil)
        #expect(TokenAuthority.bearerToken("Bearer    ") == nil)
        #expect(TokenAuthority.bearerToken("Basic abc") == nil)
        #expect(TokenAuthority.bearerToken("Bearerabc") == nil)
        #expect(TokenAuthority.hash("abc") == TokenAuthority.hash(String("xabc".dropFirst())))
    }

    @Test("401 without a token or with an unknown one, 403 with the wrong scope, 2xx with the right one")
    func scopes() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: nil).status == 401)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: "nope").status == 401)

        func token(_ name: String, _ scopes: [String]) async throws -> String {
            let scopeList = scopes.map { "\"\($0)\"" }.joined(separator: ",")
            let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"\#(name)","scopes":[\#(scopeList)]}"#)
            #expect(created.status == 201)
            return try #require(object(created.body)["token"] as? String)
        }
        let ingest = try await token("gateway", ["ingest"])
        let readOne = try await token("app", ["read:tg:1"])
        let readAll = try await token("support", ["read:*"])

        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: ingest).status == 200)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 2), token: readOne).status == 403)
        #expect(try await server.request(.GET, "/v1/accounts/tg:1/state", token: ingest).status == 403)
        #expect(try await server.request(.GET, "/v1/accounts/tg:1/state", token: readOne).status == 200)
        #expect(try await server.request(.GET, "/v1/accounts/tg:2/state", token: readOne).status == 403)
        #expect(try await server.request(.GET, "/v1/accounts/tg:2/state", token: readAll).status == 404)
        #expect(try await server.request(.GET, "/v1/stats", token: readOne).status == 403)
        #expect(try await server.request(.GET, "/v1/stats", token: readAll).status == 200)
        #expect(try await server.request(.POST, "/v1/admin/snapshot", token: readAll).status == 403)
        #expect(try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"x","scopes":["root"]}"#).status == 400)

        // Open endpoints, for an internal address.
        #expect(try await server.request(.GET, "/healthz", token: nil).status == 200)
        #expect(try await server.request(.GET, "/readyz", token: nil).status == 200)
        let metrics = try await server.request(.GET, "/metrics", token: nil)
        #expect(metrics.status == 200)
        #expect(metrics.body.contains(#"herald_events_appended_total{type="notify",format="herald"} 1"#))
        #expect(metrics.body.contains("herald_commit_latency_seconds_count 1"))
        #expect(metrics.body.contains("herald_last_seq 1"))

        // Revoked tokens stop working.
        #expect(try await server.request(.DELETE, "/v1/admin/tokens/gateway").status == 200)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 3), token: ingest).status == 401)
        await server.stop()
    }

    @Test("tokens are stored as SHA-256 only, and survive a restart")
    func storedHashed() async throws {
        let directory = TemporaryDirectory("serve")
        var server = try await LiveServer(path: directory.path)
        let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"app","scopes":["read:*"]}"#)
        let token = try #require(object(created.body)["token"] as? String)
        await server.stop()
        let data = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/serve/data.mdb"))
        #expect(data.range(of: Data(token.utf8)) == nil)
        server = try await LiveServer(path: directory.path)
        #expect(try await server.request(.GET, "/v1/stats", token: token).status == 200)
        await server.stop()
    }

    @Test("without HERALD_ADMIN_TOKEN the first start generates an admin token, once")
    func generatedAdmin() async throws {
        let directory = TemporaryDirectory("serve")
        var server = try await LiveServer(path: directory.path) { $0.adminToken = nil }
        let generated = try #require(server.server.generatedAdminToken)
        #expect(try await server.request(.GET, "/v1/stats", token: generated).status == 200)
        await server.stop()
        server = try await LiveServer(path: directory.path) { $0.adminToken = nil }
        #expect(server.server.generatedAdminToken == nil)
        #expect(try await server.request(.GET, "/v1/stats", token: generated).status == 200)
        await server.stop()
    }
}

@Suite("serve: limits", .serverThreads)
struct LimitTests {
    @Test("a token over its rate gets 429 with Retry-After; other tokens are not affected")
    func rateLimit() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) { $0.requestsPerSecondPerToken = 1 }
        let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"app","scopes":["read:*"]}"#)
        let token = try #require(object(created.body)["token"] as? String)
        var statuses: [Int] = []
        for _ in 0..<20 { statuses.append(try await server.request(.GET, "/v1/stats", token: token).status) }
        #expect(statuses.filter { $0 == 200 }.count >= 2)
        #expect(statuses.contains(429))
        let limited = try await server.request(.GET, "/v1/stats", token: token)
        if limited.status == 429 { #expect(limited.headers.first(name: "Retry-After") == "1") }
        #expect(try await server.request(.GET, "/v1/stats").status == 200)
        await server.stop()
    }

    @Test("an idle update stream sends keep-alive comments")
    func keepAlive() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) { $0.heartbeatSeconds = 1 }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1)).status == 200)
        var request = HTTPClientRequest(url: server.base + "/v1/accounts/tg:1/updates")
        request.headers.add(name: "Authorization", value: "Bearer \(LiveServer.adminToken)")
        let response = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
        let watchdog = ReadEndpointTests.watchdog(server)  // no keep-alive must fail, not hang
        defer { watchdog.cancel() }
        var text = ""
        for try await buffer in response.body {
            text += String(buffer: buffer)
            if text.contains(": keep-alive") { break }
        }
        #expect(text.contains(": keep-alive"))
        await server.stop()
    }
}
