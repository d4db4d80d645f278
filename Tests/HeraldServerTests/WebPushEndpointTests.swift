import Crypto
import Foundation
@testable import HeraldIngest
import HeraldStore
@testable import HeraldServer
import HeraldTestSupport
import Testing

/// `POST /push/{token}` with bodies encrypted per RFC 8291 for a subscription the admin API made.
@Suite("serve: Web Push endpoint", .serverThreads)
struct WebPushEndpointTests {
    static func base64urlDecode(_ text: String) -> [UInt8] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Array(Data(base64Encoded: base64)!)
    }

    @Test("an aes128gcm body for a registered subscription is decrypted and stored; others are refused")
    func pushDelivered() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:7","inner_format":"herald"}"#)
        #expect(created.status == 201)
        let subscription = object(created.body)
        let endpoint = try #require(subscription["endpoint"] as? String)
        let p256dh = Self.base64urlDecode(try #require(subscription["p256dh"] as? String))
        let auth = Self.base64urlDecode(try #require(subscription["auth"] as? String))
        #expect(p256dh.count == 65 && auth.count == 16)

        // The application server's side: it knows only p256dh and auth. Encrypt with a
        // receiver key value that has the same public key: the test needs the private key
        // only to call the test encryptor, which takes WebPushKeys; the body depends on
        // the public key alone.
        let stored = try #require(try server.server.host.tables.get(.subscriptions, String(endpoint.dropFirst(6)), as: WebPushSubscription.self))
        let keys = try WebPushKeys(privateKeyBase64url: stored.privateKey, authSecretBase64url: stored.authSecret)
        #expect(keys.publicKey == p256dh)
        let plaintext = Array(notifyLine(account: "tg:7", id: 1, body: "secret text").utf8)
        let sender = P256.KeyAgreement.PrivateKey()
        let body = try WebPushCipher.encryptForTests(
            plaintext, to: keys, senderPrivateKey: Array(sender.rawRepresentation), salt: Array(repeating: 7, count: 16))
        let response = try await server.requestBytes(.POST, endpoint, body: body, headers: [("Content-Encoding", "aes128gcm"), ("TTL", "60"), ("Urgency", "high")])
        #expect(response.status == 201)
        #expect(object(response.body)["seqs"] as? [Int] == [1])

        #expect(try await server.requestBytes(.POST, "/push/unknown", body: body).status == 404)
        #expect(try await server.requestBytes(.POST, endpoint, body: body, headers: [("Urgency", "whenever")]).status == 400)
        var tampered = body
        tampered[tampered.count - 1] ^= 1
        let bad = try await server.requestBytes(.POST, endpoint, body: tampered)
        #expect(bad.status == 400)
        await server.stop()
        let store = try Store(path: directory.path)
        let records = try await store.history.records()
        #expect(records.count == 1)
        #expect(records.first?.source.format == "webpush")
        #expect(records.first?.event.account == "tg:7")
        #expect(try store.quarantine.all().count == 1)
    }

    @Test("no subscription token starts with '-', which the CLI's --token would read as an option")
    func tokensNeverLookLikeOptions() throws {
        let directory = TemporaryDirectory("serve")
        let registry = try SubscriptionRegistry(storePath: directory.path)
        // One base64url token in 64 started with '-': among 256, one would with odds of 98 %.
        let tokens = try (0..<256).map { _ in try registry.create(account: "tg:1", innerFormat: "herald").token }
        #expect(Set(tokens).count == 256)
        #expect(tokens.allSatisfy { !$0.hasPrefix("-") && $0.count == 43 }, "\(tokens.filter { $0.hasPrefix("-") })")
    }

    @Test("subscriptions made with the CLI (herald serve subscriptions) receive pushes; list shows their keys; removed ones get 404")
    func cliSubscriptions() async throws {
        let directory = TemporaryDirectory("serve")
        let herald = ServeProcessTests.executable
        let added = try run(herald, ["serve", "subscriptions", "add", "--store", directory.path, "--account", "tg:8", "--json"])
        #expect(added.status == 0, "\(added.output)")
        let created = object(added.output)
        let token = try #require(created["token"] as? String)
        #expect(created["endpoint"] as? String == "/push/\(token)" && created["account"] as? String == "tg:8")
        let p256dh = Self.base64urlDecode(try #require(created["p256dh"] as? String))
        #expect(p256dh.count == 65 && Self.base64urlDecode(created["auth"] as? String ?? "").count == 16)
        let listed = try run(herald, ["serve", "subscriptions", "list", "--store", directory.path, "--json", "--account", "tg:8"])
        let lines = listed.output.split(separator: "\n").map { object(String($0)) }
        #expect(lines.count == 1 && lines.first?["p256dh"] as? String == created["p256dh"] as? String)
        #expect(!listed.output.contains("privateKey"))
        let bad = try run(herald, ["serve", "subscriptions", "add", "--store", directory.path, "--account", "tg:8", "--inner-format", "webpush"])
        #expect(bad.status != 0)

        let server = try await LiveServer(path: directory.path)
        let stored = try #require(try server.server.host.tables.get(.subscriptions, token, as: WebPushSubscription.self))
        let keys = try WebPushKeys(privateKeyBase64url: stored.privateKey, authSecretBase64url: stored.authSecret)
        #expect(keys.publicKey == p256dh)
        let body = try WebPushCipher.encryptForTests(
            Array(notifyLine(account: "tg:8", id: 1).utf8), to: keys,
            senderPrivateKey: Array(P256.KeyAgreement.PrivateKey().rawRepresentation), salt: Array(repeating: 3, count: 16))
        #expect(try await server.requestBytes(.POST, "/push/\(token)", body: body, headers: [("Content-Encoding", "aes128gcm")]).status == 201)
        // Removed beside the running server: its endpoint is gone from the next push on.
        let removed = try run(herald, ["serve", "subscriptions", "remove", "--store", directory.path, "--token", token, "--json"])
        #expect(removed.status == 0 && object(removed.output)["removed"] as? String == token, "\(removed.output)")
        #expect(try await server.requestBytes(.POST, "/push/\(token)", body: body, headers: [("Content-Encoding", "aes128gcm")]).status == 404)
        #expect(try run(herald, ["serve", "subscriptions", "remove", "--store", directory.path, "--token", token]).status != 0)
        #expect(try run(herald, ["serve", "subscriptions", "list", "--store", directory.path]).output.isEmpty)
        await server.stop()
    }
}
