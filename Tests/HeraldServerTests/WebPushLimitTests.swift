import Crypto
import Foundation
@testable import HeraldIngest
import HeraldStore
@testable import HeraldServer
import HeraldTestSupport
import Testing

/// The bounds of the unauthenticated Web Push endpoint: body size, and what the quarantine
/// keeps of a body that does not decrypt.
@Suite("serve: Web Push limits", .serverThreads)
struct WebPushLimitTests {
    func hex(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test("over 4,096 bytes is 413 and stores nothing; an undecryptable body is quarantined as prefix, size and SHA-256")
    func boundedBodies() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:7","inner_format":"herald"}"#)
        let endpoint = try #require(object(created.body)["endpoint"] as? String)
        var generator = SplitMix64(seed: 36)
        let random = { (count: Int) in (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }

        let tooLarge = random(4_097)
        let refused = try await server.requestBytes(.POST, endpoint, body: tooLarge, headers: [("Content-Encoding", "aes128gcm")])
        #expect(refused.status == 413, "\(refused.body)")
        #expect(try await server.requestBytes(.POST, endpoint, body: random(1 << 20)).status == 413)

        let garbage = random(4_096)
        let bad = try await server.requestBytes(.POST, endpoint, body: garbage, headers: [("Content-Encoding", "aes128gcm")])
        #expect(bad.status == 400, "\(bad.body)")

        // Sealed with the right keys, then one ciphertext byte flipped: fails authentication.
        let stored = try #require(try server.server.host.tables.get(.subscriptions, String(endpoint.dropFirst(6)), as: WebPushSubscription.self))
        let keys = try WebPushKeys(privateKeyBase64url: stored.privateKey, authSecretBase64url: stored.authSecret)
        let sender = Array(P256.KeyAgreement.PrivateKey().rawRepresentation)
        var tampered = try WebPushCipher.encryptForTests(
            Array(notifyLine(account: "tg:7", id: 1, body: String(repeating: "x", count: 1_000)).utf8), to: keys,
            senderPrivateKey: sender, salt: Array(repeating: 1, count: 16))
        tampered[tampered.count - 1] ^= 1
        #expect(try await server.requestBytes(.POST, endpoint, body: tampered).status == 400)
        // Decrypts, but holds an event of another account: kept whole, it can be fixed and retried.
        let foreign = try WebPushCipher.encryptForTests(
            Array(notifyLine(account: "tg:8", id: 2, body: String(repeating: "y", count: 500)).utf8), to: keys,
            senderPrivateKey: sender, salt: Array(repeating: 2, count: 16))
        #expect(try await server.requestBytes(.POST, endpoint, body: foreign).status == 400)
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains("\nherald_webpush_undecryptable_total 2\n"), "\(metrics)")
        await server.stop()

        let store = try Store(path: directory.path)
        #expect(try await store.history.records().isEmpty)
        let entries = try store.quarantine.all()
        #expect(entries.count == 3)
        #expect(entries.map(\.raw.count) == [256, 256, foreign.count])
        #expect(entries[0].raw == Array(garbage.prefix(256)))
        #expect(entries[0].reason.contains("body of 4096 bytes (SHA-256 \(hex(garbage))): its first 256 bytes are kept"), "\(entries[0].reason)")
        #expect(entries[1].reason.contains("failed authentication") && entries[1].reason.contains("SHA-256 \(hex(tampered))"), "\(entries[1].reason)")
        #expect(entries[2].raw == foreign && !entries[2].reason.contains("SHA-256"))
        #expect(entries.allSatisfy { $0.account == "tg:7" && $0.format == "webpush" })
    }

    @Test("a Matrix notify body over 128 KiB is 413; one under it is read")
    func boundedMatrixNotify() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let padding = String(repeating: "a", count: 128 << 10)
        let large = #"{"notification":{"devices":[{"pushkey":"unknown"}],"padding":"\#(padding)"}}"#
        #expect(try await server.request(.POST, "/_matrix/push/v1/notify", body: large, token: nil).status == 413)
        let small = #"{"notification":{"devices":[{"pushkey":"unknown"}]}}"#
        let answer = try await server.request(.POST, "/_matrix/push/v1/notify", body: small, token: nil)
        #expect(answer.status == 200 && object(answer.body)["rejected"] as? [String] == ["unknown"], "\(answer.body)")
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        #expect(metrics.contains("\nherald_matrix_pushkeys_rejected_total 1\n"), "\(metrics)")
        await server.stop()
    }

    @Test("with a quarantine limit, floods of undecryptable pushes drop the oldest entries, counted in /metrics")
    func quarantineQuota() async throws {
        let directory = TemporaryDirectory("serve")
        // No endpoint rate limit: 120 pushes within two seconds would pass its burst of 100.
        let server = try await LiveServer(path: directory.path) {
            $0.quarantineMaxBytes = 24 << 10
            $0.endpointRequestsPerSecond = 0
        }
        let created = try await server.request(.POST, "/v1/admin/subscriptions", body: #"{"account":"tg:7","inner_format":"herald"}"#)
        let endpoint = try #require(object(created.body)["endpoint"] as? String)
        var generator = SplitMix64(seed: 7)
        for _ in 0..<120 {
            let garbage = (0..<4_096).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            #expect(try await server.requestBytes(.POST, endpoint, body: garbage).status == 400)
        }
        let metrics = try await server.request(.GET, "/metrics", token: nil).body
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("herald_quarantine_dropped_total ") }
        let dropped = try #require(line.flatMap { Int($0.split(separator: " ")[1]) })
        await server.stop()
        let entries = try Store(path: directory.path).quarantine.all()
        #expect(dropped > 0 && dropped + entries.count == 120, "dropped \(dropped), kept \(entries.count)")
        #expect(entries.last?.id == 120 && entries.first?.id == UInt64(dropped + 1))
    }
}
