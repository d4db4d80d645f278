import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Telegram encryption")
struct TelegramCipherTests {
    @Test func keyIdMatchesTheVector() throws {
        let vector = try Samples.json("telegram/encrypted-push-vector.json")
        let expected = try #require(vector["key_id"] as? Int)
        let key = try Samples.telegramKey()
        #expect(key.keyId == Int64(expected))
        #expect(key.bytes.count == 256)
        #expect(try TelegramKey(base64url: key.base64url) == key)
        #expect(!key.description.contains(key.base64url))
    }

    @Test func vectorDecryptsToItsExactPlaintext() throws {
        let key = try Samples.telegramKey()
        for push in try Samples.telegramPushes() {
            let root = try PayloadObject.parse(Array(push.payload.utf8), format: .telegram)
            let p = try #require(try root.string("p"))
            let plaintext = try TelegramCipher.decrypt(p, keys: [key]).plaintext
            #expect(String(decoding: plaintext, as: UTF8.self) == push.plaintext)
        }
    }

    @Test func firstPushIsAMessage() throws {
        let key = try Samples.telegramKey()
        let push = try Samples.telegramPushes()[0]
        let result = try Ingest.decode(push.payload, format: nil, context: context(account: "tg:1", telegramKeys: [key]))
        #expect(result.format == .telegram)
        #expect(result.encrypted)
        #expect(result.events == [
            Event(account: "tg:1", .notify(Event.Notify(
                chat: "user:62814", kind: .message, id: 590047, date: receivedAt, partial: true,
                title: "Arseny Smirnov", body: "abcdefg", sender: "Arseny Smirnov")))
        ])
    }

    @Test func encryptedPushInsideAnFCMDataObject() throws {
        let key = try Samples.telegramKey()
        let push = try Samples.telegramPushes()[0]
        let wrapped = #"{"data":\#(push.payload)}"#
        #expect(Ingest.detect(Array(wrapped.utf8)) == .telegram)
        let result = try Ingest.decode(wrapped, format: nil, context: context(account: "tg:1", telegramKeys: [key]))
        #expect(result.encrypted)
        #expect(result.events == (try events(push.plaintext, .telegram, context(account: "tg:1"))))
    }

    /// The empty loc_key push with `custom.max_id` and `channel_id` is read as a read receipt.
    @Test func secondPushWithEmptyLocKeyIsARead() throws {
        let key = try Samples.telegramKey()
        let push = try Samples.telegramPushes()[1]
        let result = try Ingest.decode(push.payload, format: .telegram, context: context(account: "tg:1", telegramKeys: [key]))
        #expect(result.encrypted)
        #expect(result.events == [Event(account: "tg:1", .read(chat: "channel:1176895497", maxId: 1359))])
    }

    @Test func encryptedSessionRevokeIsHonoured() throws {
        let key = try Samples.telegramKey()
        let inner = Array(#"{"loc_key":"SESSION_REVOKE","loc_args":[],"custom":{}}"#.utf8)
        let line = #"{"p":"\#(Self.encrypt(inner, key: key, padding: 20))"}"#
        let result = try Ingest.decode(line, format: nil, context: context(account: "tg:1", telegramKeys: [key]))
        #expect(result.events == [Event(account: "tg:1", .revoke)])
    }

    @Test func wrongKeyIsRejected() throws {
        let push = try Samples.telegramPushes()[0]
        var bytes = try Samples.telegramKey().bytes
        bytes[100] ^= 1  // inside the msg_key range key[96..<128]
        let otherKey = try TelegramKey(bytes: bytes)
        let noKey = ingestError(push.payload, .telegram, context(account: "a", telegramKeys: [otherKey]))
        #expect(noKey?.field == "p")
        #expect(noKey?.reason.contains("no Telegram key with id 2886285856283441188") == true)
        #expect(ingestError(push.payload, .telegram, context(account: "a"))?.reason.contains("IngestContext.telegramKeys") == true)
        // A key that claims the right id but has other bytes fails the msg_key check.
        for index in [8, 50, 100] {
            var forgedBytes = try Samples.telegramKey().bytes
            forgedBytes[index] ^= 1
            let forged = TelegramKey(unchecked: forgedBytes, keyId: 2_886_285_856_283_441_188)
            #expect(ingestError(push.payload, .telegram, context(account: "a", telegramKeys: [forged]))
                == IngestError(format: .telegram, field: "p", reason: "msg_key mismatch: wrong key or corrupted payload"))
        }
    }

    @Test func everyFlippedByteIsRejected() throws {
        let key = try Samples.telegramKey()
        let push = try Samples.telegramPushes()[0]
        let root = try PayloadObject.parse(Array(push.payload.utf8), format: .telegram)
        let p = try #require(try root.string("p"))
        let data = try #require(Base64URL.decode(p))
        for index in data.indices {
            var flipped = data
            flipped[index] ^= 0x40
            #expect(throws: IngestError.self) {
                try TelegramCipher.decrypt(Base64URL.encode(flipped), keys: [key])
            }
        }
    }

    @Test func malformedPIsRejected() throws {
        let key = try Samples.telegramKey()
        let ctx = context(account: "a", telegramKeys: [key])
        #expect(ingestError(#"{"p":"!!"}"#, .telegram, ctx) == IngestError(format: .telegram, field: "p", reason: "not base64url"))
        #expect(ingestError(#"{"p":"AAAA"}"#, .telegram, ctx)?.reason.hasPrefix("expected 24 + a multiple of 16 bytes") == true)
        #expect(ingestError(#"{"p":5}"#, .telegram, ctx)?.field == "p")
    }

    @Test func keyMustBe256Bytes() {
        #expect(throws: IngestError(format: .telegram, field: "telegramKey", reason: "an auth key is 256 bytes, got 3")) {
            try TelegramKey(base64url: "AAAA")
        }
        #expect(throws: IngestError(format: .telegram, field: "telegramKey", reason: "not base64url")) {
            try TelegramKey(base64url: "a b")
        }
    }

    /// Encrypts like the server does (IGE encryption composed from the AES permutation), to
    /// build payloads the vector does not cover.
    static func encrypt(_ json: [UInt8], key: TelegramKey, padding: Int) -> String {
        var plaintext = withUnsafeBytes(of: UInt32(json.count).littleEndian, Array.init) + json
        var pad = padding
        while (plaintext.count + pad) % 16 != 0 { pad += 1 }
        plaintext += (0..<pad).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let msgKey = TelegramCipher.computeMsgKey(key: key, plaintext: plaintext)
        let (aesKey, iv) = TelegramCipher.deriveKeyAndIV(key: key, msgKey: msgKey)
        let ciphertext = try! TelegramCipher.encryptIGE(plaintext, aesKey: aesKey, iv: iv)
        let id = withUnsafeBytes(of: key.keyId.littleEndian, Array.init)
        return Base64URL.encode(id + msgKey + ciphertext)
    }
}
