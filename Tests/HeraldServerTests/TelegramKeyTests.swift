import Foundation
import HeraldStore
import HeraldTestSupport
import Testing

/// Telegram auth keys added and removed through the admin API while serving, and used at once
/// by `format=telegram` ingest; the known-answer vector comes from `Tests/Fixtures/payloads`.
@Suite("serve: Telegram keys", .serverThreads)
struct TelegramKeyTests {
    /// `Tests/Fixtures/payloads/telegram/encrypted-push-vector.json` (TDLib's test/mtproto.cpp).
    static func vector() throws -> (key: String, keyId: Int64, push: String) {
        let url = URL(fileURLWithPath: Fixtures.path("payloads/telegram/encrypted-push-vector.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let pushes = try #require(document["pushes"] as? [[String: Any]])
        let payload = try #require(pushes.first?["payload"])
        let push = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        return (try #require(document["key_base64url"] as? String), try #require((document["key_id"] as? NSNumber)?.int64Value), push)
    }

    @Test("a key added while serving decrypts the next push; bound elsewhere is 409 unless rebind; list shows no bytes; delete")
    func keysWhileServing() async throws {
        let (key, keyId, push) = try Self.vector()
        let directory = TemporaryDirectory("serve-keys")
        let server = try await LiveServer(path: directory.path)
        let ingest = "/v1/ingest?format=telegram&account=tg:7"

        let before = try await server.request(.POST, ingest, body: push)
        #expect(before.status == 422 && before.body.contains("key"), "\(before.body)")
        #expect(try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:7"}"#, token: nil).status == 401)
        #expect(try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"AAAA","account":"tg:7"}"#).status == 400)

        let added = try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:7"}"#)
        #expect(added.status == 201, "\(added.body)")
        #expect(object(added.body)["id"] as? Int64 == keyId)
        let again = try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:7"}"#)
        #expect(again.status == 200 && object(again.body)["added"] as? Bool == false, "\(again.body)")

        let stored = try await server.request(.POST, ingest, body: push)
        #expect(stored.status == 200, "\(stored.body)")
        let state = try await server.request(.GET, "/v1/accounts/tg:7/state")
        #expect(state.status == 200 && state.body.contains("abcdefg"), "\(state.body)")

        let elsewhere = try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:8"}"#)
        #expect(elsewhere.status == 409 && elsewhere.body.contains("tg:7"), "\(elsewhere.body)")
        let rebound = try await server.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:8","rebind":true}"#)
        #expect(rebound.status == 201, "\(rebound.body)")

        let list = try await server.request(.GET, "/v1/admin/keys")
        let keys = try #require(object(list.body)["keys"] as? [[String: Any]])
        #expect(keys.count == 1 && keys[0]["account"] as? String == "tg:8" && keys[0]["id"] as? Int64 == keyId)
        #expect(!list.body.contains(String(key.prefix(24))))

        #expect(try await server.request(.DELETE, "/v1/admin/keys/\(keyId)").status == 200)
        #expect(try await server.request(.DELETE, "/v1/admin/keys/\(keyId)").status == 404)
        #expect(try await server.request(.DELETE, "/v1/admin/keys/nope").status == 400)
        await server.stop()
        #expect(try Store(path: directory.path).keyring.all().isEmpty)
    }
}
