import CSodium
import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Zulip E2EE pushes: `encrypted_data` opened with the registered push key.
@Suite("Zulip E2EE")
struct ZulipE2EETests {
    /// Key bytes 0, 1, …, 31, registered as base64 of `0x31 ‖ key`.
    static let pushKeyText = "MQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f"
    static let key = try! ZulipPushKey(id: 2408, pushKey: pushKeyText)

    static func context(keys: [ZulipPushKey] = [key]) -> IngestContext {
        IngestContext(receivedAt: 1_754_390_000, zulipPushKeys: keys)
    }

    /// `plaintext` sealed as a Zulip server does (libsodium secretbox with a fresh nonce),
    /// as standard base64 of `nonce ‖ MAC ‖ ciphertext`.
    static func seal(_ plaintext: [UInt8], key: [UInt8] = key.bytes) -> String {
        var nonce = [UInt8](repeating: 0, count: ZulipCipher.nonceCount)
        randombytes_buf(&nonce, nonce.count)
        var sealed = [UInt8](repeating: 0, count: ZulipCipher.macCount + plaintext.count)
        #expect(crypto_secretbox_easy(&sealed, plaintext, UInt64(plaintext.count), nonce, key) == 0)
        return Data(nonce + sealed).base64EncodedString()
    }

    /// The shapes that carry `encrypted_data`: FCM data (every value a string), the APNs
    /// payload (with its placeholder alert), Zulip 11's `push_account_id`, and under `data`.
    static func wrappers(_ box: String) -> [String] {
        [
            #"{"push_key_id":"2408","encrypted_data":"\#(box)"}"#,
            #"{"push_key_id":2408,"encrypted_data":"\#(box)","aps":{"mutable-content":1,"alert":{"title":"New notification"}}}"#,
            #"{"push_account_id":2408,"encrypted_data":"\#(box)"}"#,
            #"{"data":{"push_key_id":"2408","encrypted_data":"\#(box)"}}"#,
        ]
    }

    @Test(arguments: ["e2ee-channel-message", "e2ee-direct-message", "e2ee-remove", "e2ee-test"])
    func sealedSamplesGiveThePlainEvents(_ name: String) throws {
        let plain = try Samples.bytes("zulip/\(name).json")
        let expected = try Ingest.decode(plain, format: .zulip, context: Self.context()).events
        #expect(!expected.isEmpty)
        for wrapper in Self.wrappers(Self.seal(plain)) {
            let result = try Ingest.decode(Array(wrapper.utf8), format: nil, context: Self.context())
            #expect(result.format == .zulip, "detected as \(result.format) for \(wrapper.prefix(40))")
            #expect(result.encrypted)
            #expect(result.events == expected)
        }
    }

    /// A vector sealed by PyNaCl 1.6's `SecretBox` (what the Zulip server encrypts with), not
    /// by libsodium through this code: key bytes 0…31, nonce bytes 100…123, over the compact
    /// JSON of `zulip/e2ee-direct-message.json`.
    @Test func pyNaClVector() throws {
        let box = """
            ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7iG4kfw+iIei2TbHILPmFmnmb+qZUwquHxN8ZtkPh0GweyVfJkMMlb4QgYPlv+LrpzwqrcSsVodDDOjUQZXKxCJ7+z3V3pAN9WZQ/bauS2gE1qWBPulkp5tTQaoAs4dexPOP5d53QVHjn9+BXVpKAtY66jAmZvEjlL1kN7t815VEdQeIVo1IwbGK2LMeNY7NfyiIhOkWrfmA9Sk5WqZaVJgZZqXZJVFAm8D+LQ1YU+MKtTh518fOgAvyEhlQG2ZSGiMOEQoyTSzh/WUT3MCltep9C8Sis216xSh2GRDhdLowLHxcZvXKUZrgs9FtOs8WocYKtjdX0iyWjL853MJgKtDNmtjNgxHD7ZICxoMNv258UxDd7CZRrKHnZkLumBFUoFldjN0jw0ccn0Jljpl8KpjVues+RH+WD1IL+zArbAJdYeAmysOyiqLx9HY+1GR9v99cHHZvsynAEyQqBqwTXD73n7WTnQxkcSJJdiDaB2H7AFCBTnZdGdG8XvPhQTQ==
            """
        let result = try Ingest.decode(#"{"push_key_id":"2408","encrypted_data":"\#(box)"}"#, format: .zulip, context: Self.context())
        #expect(result.encrypted)
        #expect(result.events == [
            Event(account: "zulip:http://zulip.testserver/|10", .notify(Event.Notify(
                chat: "dm:6,10,12,15", kind: .message, id: 46, date: 1_754_385_290, partial: true,
                title: "aaron", body: "test content", sender: "aaron")))
        ])
    }

    @Test func damageAndWrongKeysAreRejectedByName() throws {
        let plain = try Samples.bytes("zulip/e2ee-test.json")
        let box = Self.seal(plain)
        var bytes = [UInt8](Data(base64Encoded: box)!)

        // Every byte of nonce, MAC and ciphertext is covered.
        for index in [0, 23, 24, 39, 40, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x01
            let error = ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(Data(damaged).base64EncodedString())"}"#, nil, Self.context())
            #expect(error?.field == "encrypted_data")
            #expect(error?.reason.contains("authentication failed") == true, "byte \(index): \(String(describing: error))")
        }
        // The right id with other key bytes.
        let otherKey = try ZulipPushKey(id: 2408, pushKey: Data([0x31] + [UInt8](repeating: 7, count: 32)).base64EncodedString())
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(box)"}"#, nil, Self.context(keys: [otherKey]))?
            .reason.contains("authentication failed") == true)
        // An id with no key, and no keys at all.
        let unknown = ingestError(#"{"push_key_id":9,"encrypted_data":"\#(box)"}"#, nil, Self.context())
        #expect(unknown == IngestError(format: .zulip, field: "push_key_id", reason: "no Zulip push key with id 9; known ids: 2408"))
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(box)"}"#, nil, Self.context(keys: []))?
            .reason.contains("IngestContext.zulipPushKeys") == true)
        // Too short to hold nonce, MAC and any ciphertext; not base64; no key id.
        bytes.removeLast(bytes.count - 40)
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(Data(bytes).base64EncodedString())"}"#, nil, Self.context())?
            .reason.contains("expected more than 40 bytes") == true)
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"not base64!"}"#, nil, Self.context())?.field == "encrypted_data")
        #expect(ingestError(#"{"data":{"encrypted_data":"\#(box)"},"realm_url":"x"}"#, .zulip, Self.context())?.field == "data.push_key_id")
    }

    @Test func decryptedContentIsCheckedLikePlainContent() throws {
        let notJSON = Self.seal(Array("not json".utf8))
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(notJSON)"}"#, nil, Self.context())?
            .reason.hasPrefix("decrypted payload:") == true)
        let nested = Self.seal(Array(#"{"push_key_id":2408,"encrypted_data":"AAAA"}"#.utf8))
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(nested)"}"#, nil, Self.context())?
            .reason == "decrypted payload is itself encrypted")
        let noMessageId = Self.seal(Array(#"{"realm_url":"https://z.example","user_id":5,"type":"message","recipient_type":"direct","sender_id":6}"#.utf8))
        #expect(ingestError(#"{"push_key_id":2408,"encrypted_data":"\#(noMessageId)"}"#, nil, Self.context())?.field == "message_id")
    }

    @Test func pushKeysParseOnlyTheRegisteredForm() throws {
        #expect(Self.key.bytes == Array(0..<32))
        #expect(try ZulipPushKey(argument: "2408:\(Self.pushKeyText)") == Self.key)
        #expect(Self.key.description == "ZulipPushKey(id: 2408)")
        let raw32 = Data([UInt8](repeating: 1, count: 32)).base64EncodedString()
        #expect(throws: IngestError.self) { try ZulipPushKey(id: 1, pushKey: raw32) }
        let wrongPrefix = Data([0x32] + [UInt8](repeating: 1, count: 32)).base64EncodedString()
        #expect(throws: IngestError.self) { try ZulipPushKey(id: 1, pushKey: wrongPrefix) }
        #expect(throws: IngestError.self) { try ZulipPushKey(id: 1, pushKey: "%%%") }
        #expect(throws: IngestError.self) { try ZulipPushKey(id: -1, pushKey: Self.pushKeyText) }
        #expect(throws: IngestError.self) { try ZulipPushKey(id: 1 << 32, pushKey: Self.pushKeyText) }
        #expect(throws: IngestError.self) { try ZulipPushKey(argument: Self.pushKeyText) }
    }
}
