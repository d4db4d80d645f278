import Crypto
import Foundation
import HeraldEvents
@testable import HeraldIngest
import HeraldStore
@testable import HeraldServer
import HeraldTestSupport
import Testing

/// Subscriptions bound to a VAPID application server key (RFC 8292): pushes to them need a
/// JWT signed by that key, checked over loopback against a real server and store.
@Suite("serve: VAPID-bound Web Push subscriptions", .serverThreads)
struct VAPIDTests {
    static func base64url(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An ES256 JWT over `claims`, signed by `key` (raw r‖s signature, as RFC 7518 §3.4 says).
    static func jwt(_ claims: String, signedBy key: P256.Signing.PrivateKey) throws -> String {
        let input = base64url(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8)) + "." + base64url(Array(claims.utf8))
        return input + "." + base64url(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static func claims(aud: String, exp: Int64, sub: String? = "mailto:ops@example.com") -> String {
        #"{"aud":"\#(aud)","exp":\#(exp)"# + (sub.map { #","sub":"\#($0)""# } ?? "") + "}"
    }

    /// An RFC 8291 body of a notify event for the subscription with `token`.
    static func body(_ server: LiveServer, token: String, id: Int) throws -> [UInt8] {
        let stored = try #require(try server.server.host.tables.get(.subscriptions, token, as: WebPushSubscription.self))
        let keys = try WebPushKeys(privateKeyBase64url: stored.privateKey, authSecretBase64url: stored.authSecret)
        return try WebPushCipher.encryptForTests(
            Array(notifyLine(account: stored.account, id: id).utf8), to: keys,
            senderPrivateKey: Array(P256.KeyAgreement.PrivateKey().rawRepresentation), salt: Array(repeating: 9, count: 16))
    }

    @Test("a push to a bound subscription needs a valid token of its key: 401 without one, 403 for another key; nothing stored")
    func boundSubscription() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let appServer = P256.Signing.PrivateKey()
        let key = Self.base64url(appServer.publicKey.x963Representation)
        let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:9","vapid_key":"\#(key)"}"#)
        #expect(created.status == 201, "\(created.body)")
        #expect(object(created.body)["vapid_key"] as? String == key)
        let endpoint = try #require(object(created.body)["endpoint"] as? String)
        let token = String(endpoint.dropFirst("/push/".count))
        // Without herald.public.url, aud is the origin of the request's Host.
        let origin = "http://127.0.0.1:\(server.port)"
        let now = Int64(Date().timeIntervalSince1970)
        let good = try Self.jwt(Self.claims(aud: origin, exp: now + 3600), signedBy: appServer)

        func push(_ id: Int, _ headers: [(String, String)]) async throws -> (status: Int, body: String) {
            try await server.requestBytes(
                .POST, endpoint, body: try Self.body(server, token: token, id: id), headers: [("Content-Encoding", "aes128gcm")] + headers)
        }
        let accepted = try await push(1, [("Authorization", "vapid t=\(good), k=\(key)")])
        #expect(accepted.status == 201, "\(accepted.body)")
        // The drafts' form, which pywebpush and older libraries send.
        let draft = try await push(2, [("Authorization", "WebPush \(good)"), ("Crypto-Key", "dh=x;p256ecdsa=\(key)")])
        #expect(draft.status == 201, "\(draft.body)")
        // No sub is fine too.
        let anonymous = try Self.jwt(Self.claims(aud: origin + "/", exp: now + 60, sub: nil), signedBy: appServer)
        #expect(try await push(3, [("Authorization", "vapid t=\(anonymous), k=\(key)")]).status == 201)

        let other = P256.Signing.PrivateKey()
        let otherKey = Self.base64url(other.publicKey.x963Representation)
        let refusals: [(String, [(String, String)], Int, String)] = [
            ("missing header", [], 401, "missing"),
            ("garbage token", [("Authorization", "vapid t=not.a.jwt, k=\(key)")], 401, "JWT"),
            ("bearer scheme", [("Authorization", "Bearer \(good)")], 401, "vapid t=JWT"),
            ("expired", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: origin, exp: now - 10), signedBy: appServer)), k=\(key)")], 401, "expired"),
            ("exp beyond 24 h", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: origin, exp: now + 25 * 3600), signedBy: appServer)), k=\(key)")], 401, "24 hours"),
            ("wrong aud", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: "https://elsewhere.example", exp: now + 60), signedBy: appServer)), k=\(key)")], 401, "origin"),
            ("aud with a path", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: origin + "/push/x", exp: now + 60), signedBy: appServer)), k=\(key)")], 401, "origin"),
            ("signed by another key, naming the bound one", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: origin, exp: now + 60), signedBy: other)), k=\(key)")], 401, "signature"),
            ("valid token of another key", [("Authorization", "vapid t=\(try Self.jwt(Self.claims(aud: origin, exp: now + 60), signedBy: other)), k=\(otherKey)")], 403, "another application server key"),
        ]
        for (what, headers, status, reason) in refusals {
            let refused = try await push(10, headers)
            #expect(refused.status == status, "\(what): \(refused.body)")
            let error = object(refused.body)["error"] as? [String: Any]
            #expect(error?["field"] as? String == "Authorization", "\(what)")
            #expect((error?["reason"] as? String)?.contains(reason) == true, "\(what): \(refused.body)")
        }
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains(#"herald_webpush_vapid_refused_total{status="401"} 8"#), "\(metrics)")
        #expect(metrics.contains(#"herald_webpush_vapid_refused_total{status="403"} 1"#))
        // A refused key at creation names the field.
        let badKey = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:9","vapid_key":"AAAA"}"#)
        #expect(badKey.status == 400 && badKey.body.contains("vapid_key"))
        await server.stop()

        let store = try Store(path: directory.path)
        #expect(try await store.history.records().map(\.event.account) == ["tg:9", "tg:9", "tg:9"])
        #expect(try store.quarantine.all().isEmpty)
    }

    @Test("with herald.public.url, endpoints are absolute under it (prefix kept) and aud must be its origin")
    func publicURLAudience() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) { $0.publicURL = try! PublicURL("https://Push.Example.com:443/herald/") }
        let appServer = P256.Signing.PrivateKey()
        let key = Self.base64url(appServer.publicKey.x963Representation)
        let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:3","vapid_key":"\#(key)"}"#)
        let endpoint = try #require(object(created.body)["endpoint"] as? String)
        #expect(endpoint.hasPrefix("https://push.example.com/herald/push/"), "\(endpoint)")
        let token = String(endpoint.dropFirst("https://push.example.com/herald/push/".count))
        let now = Int64(Date().timeIntervalSince1970)
        // The proxy in front strips /herald; the server sees /push/TOKEN.
        for (aud, status) in [("https://push.example.com", 201), ("http://127.0.0.1:\(server.port)", 401), ("https://push.example.com:8443", 401)] {
            let jwt = try Self.jwt(Self.claims(aud: aud, exp: now + 600), signedBy: appServer)
            let response = try await server.requestBytes(
                .POST, "/push/\(token)", body: try Self.body(server, token: token, id: status),
                headers: [("Content-Encoding", "aes128gcm"), ("Authorization", "vapid t=\(jwt), k=\(key)")])
            #expect(response.status == status, "aud \(aud): \(response.body)")
        }
        // An unbound subscription takes pushes without a token, as before.
        let plain = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:3"}"#)
        #expect(object(plain.body)["vapid_key"] == nil)
        let plainToken = String((object(plain.body)["endpoint"] as? String ?? "").split(separator: "/").last ?? "")
        let unbound = try await server.requestBytes(
            .POST, "/push/\(plainToken)", body: try Self.body(server, token: plainToken, id: 7), headers: [("Content-Encoding", "aes128gcm")])
        #expect(unbound.status == 201, "\(unbound.body)")
        await server.stop()
    }

    @Test("a subscription stored without vapidKey (before it existed) reads as unbound; an unbound one is stored without the field")
    func storedForm() throws {
        let old = #"{"account":"tg:1","privateKey":"k","authSecret":"a","innerFormat":"herald","createdAt":1}"#
        let fields = try #require(JSONParser.parse(Array(old.utf8)).object)
        let decoded = try #require(WebPushSubscription(fields))
        #expect(decoded.vapidKey == nil && decoded.account == "tg:1")
        let encoded = String(decoding: JSONValue.object(decoded.fields).bytes, as: UTF8.self)
        #expect(!encoded.contains("vapidKey"))
        #expect(encoded == #"{"account":"tg:1","authSecret":"a","createdAt":1,"innerFormat":"herald","privateKey":"k"}"#)
        var bound = decoded
        bound.vapidKey = "BKey"
        #expect(WebPushSubscription(JSONValue.object(bound.fields).object!) == bound)
    }
}
