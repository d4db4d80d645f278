import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOHTTP1
import Testing

/// The route groups and their token middleware: who may call which route, and the refusals.
@Suite("serve: route groups and the token middleware", .serverThreads)
struct RouteGroupTests {
    /// Every `/v1/admin/…` route, with a path that matches it.
    static let adminRoutes: [(HTTPMethod, String)] = [
        (.POST, "/v1/admin/tokens"), (.DELETE, "/v1/admin/tokens/x"), (.POST, "/v1/admin/snapshot"),
        (.POST, "/v1/admin/compact"), (.POST, "/v1/admin/expire-archive"), (.POST, "/v1/admin/backup"),
        (.GET, "/v1/admin/accounts/tg:1/export"), (.POST, "/v1/admin/accounts/tg:1/import"),
        (.POST, "/v1/admin/accounts/tg:1/fence"), (.DELETE, "/v1/admin/accounts/tg:1/fence"),
        (.GET, "/v1/admin/accounts/tg:1/registrations"), (.POST, "/v1/admin/accounts/tg:1/registrations"),
        (.POST, "/v1/admin/accounts/tg:1/purge"), (.GET, "/v1/admin/routes"),
        (.POST, "/v1/admin/pushkeys"), (.GET, "/v1/admin/pushkeys"), (.DELETE, "/v1/admin/pushkeys/k"),
        (.POST, "/v1/admin/subscriptions"), (.DELETE, "/v1/admin/subscriptions/s"),
        (.POST, "/v1/admin/keys"), (.GET, "/v1/admin/keys"), (.DELETE, "/v1/admin/keys/1"),
    ]

    /// The read routes of account `account`.
    static func readRoutes(_ account: String) -> [String] {
        ["state", "active", "counts", "updates"].map { "/v1/accounts/\(account)/\($0)" }
            + ["/v1/audit?account=\(account)&chat=user:5"]
    }

    static func token(_ server: LiveServer, _ name: String, _ scopes: [String]) async throws -> String {
        let scopeList = scopes.map { "\"\($0)\"" }.joined(separator: ",")
        let created = try await server.request(.POST, "/v1/admin/tokens", body: #"{"name":"\#(name)","scopes":[\#(scopeList)]}"#)
        #expect(created.status == 201)
        return try #require(object(created.body)["token"] as? String)
    }

    /// The `error` member of a refusal.
    static func refusal(_ body: String) -> [String: String] {
        object(body)["error"] as? [String: String] ?? [:]
    }

    @Test("a token bound to account A is refused on every read route of account B, with the handler's old refusal")
    func accountBinding() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let watchdog = ReadEndpointTests.watchdog(server)
        defer { watchdog.cancel() }
        let both = [notifyLine(id: 1), notifyLine(account: "tg:2", id: 1)].joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: both).status == 200)
        let app = try await Self.token(server, "app", ["read:tg:1"])

        for path in Self.readRoutes("tg:2") {
            let refused = try await server.request(.GET, path, token: app)
            #expect(refused.status == 403, "\(path)")
            let expected = ["field": "Authorization", "reason": "token \"app\" lacks the scope read:tg:2"]
            #expect(Self.refusal(refused.body) == expected, "\(path)")
        }
        // The middleware decodes the account as the handlers do: tg%3A2 is tg:2.
        #expect(try await server.request(.GET, "/v1/accounts/tg%3A2/state", token: app).status == 403)
        #expect(try await server.request(.GET, "/v1/accounts/tg%3A1/state", token: app).status == 200)
        for path in Self.readRoutes("tg:1") where !path.hasSuffix("/updates") {
            #expect(try await server.request(.GET, path, token: app).status == 200, "\(path)")
        }
        // A token bound to an account reads no other account's stream, and no stats.
        #expect(try await server.request(.GET, "/v1/stats", token: app).status == 403)
        // The audit's account is checked before the token, as before: 400 without one.
        let noAccount = try await server.request(.GET, "/v1/audit?chat=user:5", token: nil)
        #expect(noAccount.status == 400)
        #expect(Self.refusal(noAccount.body) == ["field": "account", "reason": "required"])
        await server.stop()
    }

    @Test("no token: 401 with WWW-Authenticate on every token route; the push endpoints and unknown paths answer as before")
    func withoutToken() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        var paths = Self.adminRoutes
        paths += Self.readRoutes("tg:1").map { (.GET, $0) }
        paths += [(.GET, "/v1/stats"), (.POST, "/v1/events"), (.POST, "/v1/ingest")]
        for (method, path) in paths {
            let refused = try await server.request(method, path, body: "{}", token: nil)
            #expect(refused.status == 401, "\(method) \(path)")
            #expect(refused.headers.first(name: "WWW-Authenticate") == "Bearer", "\(method) \(path)")
            #expect(Self.refusal(refused.body) == ["field": "Authorization", "reason": "a bearer token is required"], "\(method) \(path)")
            let unknown = try await server.request(method, path, body: "{}", token: "hrd_nope")
            #expect(unknown.status == 401, "\(method) \(path)")
            #expect(unknown.headers.first(name: "WWW-Authenticate") == "Bearer error=\"invalid_token\"", "\(method) \(path)")
        }
        // The push endpoints take no bearer token: their handlers answer.
        let push = try await server.request(.POST, "/push/no-such-subscription", body: "x", token: nil)
        #expect(push.status == 404)
        let matrix = try await server.request(.POST, "/_matrix/push/v1/notify", body: "{}", token: nil)
        #expect(matrix.status == 400)
        // A path no route matches is 404 with or without a token, inside a group's prefix too.
        #expect(try await server.request(.GET, "/v1/admin/no-such-route", token: nil).status == 404)
        #expect(try await server.request(.GET, "/v1/accounts/tg:1/no-such-route", token: nil).status == 404)
        // Refusals are counted under the route's pattern.
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains(#"herald_http_requests_total{route="/v1/admin/tokens",method="POST",status="401"} 2"#))
        #expect(metrics.contains(#"herald_http_requests_total{route="/v1/accounts/{account}/updates",method="GET",status="401"} 2"#))
        await server.stop()
    }

    @Test("scopes: read and ingest tokens are refused on every admin route, an ingest token on every read route")
    func scopesByGroup() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let readAll = try await Self.token(server, "support", ["read:*"])
        let ingest = try await Self.token(server, "gateway", ["ingest"])
        for (method, path) in Self.adminRoutes {
            for (name, token) in [("support", readAll), ("gateway", ingest)] {
                let refused = try await server.request(method, path, body: "{}", token: token)
                #expect(refused.status == 403, "\(name): \(method) \(path)")
                #expect(Self.refusal(refused.body)["reason"] == "token \"\(name)\" lacks the scope admin", "\(method) \(path)")
            }
        }
        for path in Self.readRoutes("tg:1") + ["/v1/stats"] {
            #expect(try await server.request(.GET, path, token: ingest).status == 403, "\(path)")
        }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: readAll).status == 403)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: ingest).status == 200)
        #expect(try await server.request(.GET, "/v1/stats", token: readAll).status == 200)
        #expect(try await server.request(.GET, "/v1/admin/routes?map=pushkeys").status == 200)
        await server.stop()
    }
}
