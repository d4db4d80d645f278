import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Web Push")
struct WebPushTests {
    @Test func rfc8291IntermediateValues() throws {
        let body = try Samples.webPush("body")
        #expect(body.count == 144)
        let header = try WebPushCipher.header(of: body)
        #expect(header.salt == (try Samples.webPush("salt")))
        #expect(header.recordSize == 4096)
        #expect(header.senderPublicKey == (try Samples.webPush("as_public")))
        let keys = try Samples.webPushKeys()
        #expect(keys.publicKey == (try Samples.webPush("ua_public")))
        let secrets = try WebPushCipher.secrets(header: header, keys: keys)
        #expect(secrets.ecdhSecret == (try Samples.webPush("ecdh_secret")))
        #expect(secrets.ikm == (try Samples.webPush("ikm")))
        #expect(secrets.prk == (try Samples.webPush("prk")))
        #expect(secrets.cek == (try Samples.webPush("cek")))
        #expect(secrets.nonce == (try Samples.webPush("nonce")))
    }

    @Test func rfc8291BodyDecryptsExactly() throws {
        let plaintext = try WebPushCipher.decrypt(try Samples.webPush("body"), keys: try Samples.webPushKeys())
        #expect(plaintext == (try Samples.webPush("plaintext")))
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func bodyAsBase64TextOrRawBytes() throws {
        let raw = try Samples.webPush("body")
        let text = Base64URL.encode(raw)
        #expect(try WebPushAdapter.body(of: Array(text.utf8)) == raw)
        #expect(try WebPushAdapter.body(of: Array((text + "\n").utf8)) == raw)
        #expect(try WebPushAdapter.body(of: raw) == raw)
        #expect(Ingest.detect(raw) == .webpush)
        #expect(Ingest.detect(Array(text.utf8)) == .webpush)
    }

    @Test func innerPayloadIsAdapted() throws {
        // The vector's plaintext is not JSON: the inner adapter names the problem.
        let keys = try Samples.webPushKeys()
        let body = Base64URL.encode(try Samples.webPush("body"))
        let inner = ingestError(body, nil, context(account: "a", webPush: keys, innerFormat: .herald))
        #expect(inner?.format == .herald)
        #expect(inner?.reason.hasPrefix("invalid JSON") == true)
        #expect(ingestError(body, nil, context(account: "a", webPush: keys))?.field == "innerFormat")
        #expect(ingestError(body, .webpush, context(account: "a"))?.field == "webPush")
    }

    @Test func encryptedHeraldEventRoundTrips() throws {
        let keys = try Samples.webPushKeys()
        let line = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":5,"date":7}"#
        let body = try Self.encrypt(Array(line.utf8), to: keys)
        let result = try Ingest.decode(Base64URL.encode(body), format: nil, context: context(account: "a", webPush: keys, innerFormat: .herald))
        #expect(result.format == .webpush)
        #expect(result.encrypted)
        #expect(result.events == [Event(account: "a", .notify(Event.Notify(chat: "c", kind: .message, id: 5, date: 7)))])
    }

    @Test func tamperingIsRejected() throws {
        let keys = try Samples.webPushKeys()
        let body = try Samples.webPush("body")
        // Salt, key id and every ciphertext byte are authenticated (the record size is not:
        // any rs >= the single record's length decrypts the same).
        for index in [0, 15, 20, 21, 60, 85, 86, 100, 127, 128, 143] {
            var flipped = body
            flipped[index] ^= 0x01
            #expect(throws: IngestError.self) { try WebPushCipher.decrypt(flipped, keys: keys) }
        }
        #expect(throws: IngestError.self) { try WebPushCipher.decrypt(Array(body.dropLast()), keys: keys) }
        #expect(throws: IngestError.self) { try WebPushCipher.decrypt(Array(body.prefix(100)), keys: keys) }
        let wrong = try WebPushKeys(privateKey: try Samples.webPush("as_private"), authSecret: try Samples.webPush("auth_secret"))
        #expect(throws: IngestError.self) { try WebPushCipher.decrypt(body, keys: wrong) }
    }

    @Test func keysAreValidated() throws {
        #expect(throws: IngestError.self) { try WebPushKeys(privateKeyBase64url: "AAAA", authSecretBase64url: "BTBZMqHH6r4Tts7J_aSIgg") }
        #expect(throws: IngestError.self) {
            try WebPushKeys(privateKeyBase64url: "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94", authSecretBase64url: "AAAA")
        }
    }

    /// Encrypts `plaintext` as an application server would (one record), for tests.
    static func encrypt(_ plaintext: [UInt8], to keys: WebPushKeys) throws -> [UInt8] {
        try WebPushCipher.encryptForTests(plaintext, to: keys, senderPrivateKey: try Samples.webPush("as_private"), salt: try Samples.webPush("salt"))
    }
}
