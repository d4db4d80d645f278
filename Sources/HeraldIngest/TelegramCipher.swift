import Crypto
import _CryptoExtras

/// Decrypts Telegram's MTProto 2.0 encrypted push payloads (the `p` field).
///
/// `p` is base64url of `auth_key_id (8) ‖ msg_key (16) ‖ AES-256-IGE(plaintext)`. Keys come
/// from the MTProto 2.0 KDF with x = 8 (messages from the server); the plaintext is
/// `uint32 LE length ‖ JSON ‖ 12…1024 bytes of padding`, and is accepted only if
/// `msg_key == SHA-256(auth_key[96..<128] ‖ plaintext)[8..<24]`.
enum TelegramCipher {
    /// The KDF offset for messages from the server.
    private static let x = 8

    /// Decrypts `p` with the key whose id it names; returns the inner JSON bytes and that key
    /// (whose account the push belongs to).
    static func decrypt(_ p: String, keys: [TelegramKey]) throws(IngestError) -> (plaintext: [UInt8], key: TelegramKey) {
        guard let data = Base64URL.decode(p) else { throw failure("not base64url") }
        guard data.count >= 24 + 16, (data.count - 24) % 16 == 0 else {
            throw failure("expected 24 + a multiple of 16 bytes, got \(data.count)")
        }
        let keyId = Int64(littleEndianBytes: data[0..<8])
        guard let key = keys.first(where: { $0.keyId == keyId }) else {
            let known = keys.isEmpty ? "the context holds no key (IngestContext.telegramKeys)" : "known ids: " + keys.map { String($0.keyId) }.joined(separator: ", ")
            throw failure("no Telegram key with id \(keyId); \(known)")
        }
        let msgKey = Array(data[8..<24])
        let plaintext = try decryptIGE(Array(data[24...]), key: key, msgKey: msgKey)
        guard computeMsgKey(key: key, plaintext: plaintext) == msgKey else {
            throw failure("msg_key mismatch: wrong key or corrupted payload")
        }
        let length = Int(UInt32(plaintext[0]) | UInt32(plaintext[1]) << 8 | UInt32(plaintext[2]) << 16 | UInt32(plaintext[3]) << 24)
        guard length <= plaintext.count - 4 else {
            throw failure("length prefix \(length) exceeds the \(plaintext.count - 4) decrypted bytes")
        }
        let padding = plaintext.count - 4 - length
        guard (12...1024).contains(padding) else {
            throw failure("padding of \(padding) bytes is outside 12…1024")
        }
        return (Array(plaintext[4..<(4 + length)]), key)
    }

    /// `SHA-256(auth_key[88+x ..< 120+x] ‖ plaintext)[8..<24]`.
    static func computeMsgKey(key: TelegramKey, plaintext: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: key.bytes[(88 + x)..<(120 + x)])
        hasher.update(data: plaintext)
        return Array(Array(hasher.finalize())[8..<24])
    }

    /// The MTProto 2.0 AES key and IV for `msgKey`.
    static func deriveKeyAndIV(key: TelegramKey, msgKey: [UInt8]) -> (key: [UInt8], iv: [UInt8]) {
        let a = Array(SHA256.hash(data: msgKey + key.bytes[x..<(x + 36)]))
        let b = Array(SHA256.hash(data: Array(key.bytes[(40 + x)..<(76 + x)]) + msgKey))
        let aesKey = Array(a[0..<8] + b[8..<24] + a[24..<32])
        let aesIV = Array(b[0..<8] + a[8..<24] + b[24..<32])
        return (aesKey, aesIV)
    }

    /// AES-256-IGE decryption composed from swift-crypto's single-block AES permutation:
    /// `p[i] = D(c[i] ⊕ p[i-1]) ⊕ c[i-1]`, with `c[-1] = iv[0..<16]`, `p[-1] = iv[16..<32]`.
    static func decryptIGE(_ ciphertext: [UInt8], key: TelegramKey, msgKey: [UInt8]) throws(IngestError) -> [UInt8] {
        let (aesKey, iv) = deriveKeyAndIV(key: key, msgKey: msgKey)
        let symmetricKey = SymmetricKey(data: aesKey)
        var previousCipher = Array(iv[0..<16])
        var previousPlain = Array(iv[16..<32])
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(ciphertext.count)
        var block = [UInt8](repeating: 0, count: 16)
        var start = 0
        while start < ciphertext.count {
            for offset in 0..<16 { block[offset] = ciphertext[start + offset] ^ previousPlain[offset] }
            do {
                try AES.inversePermute(&block, key: symmetricKey)
            } catch {
                throw failure("AES block decryption failed: \(error)")
            }
            for offset in 0..<16 { block[offset] ^= previousCipher[offset] }
            plaintext.append(contentsOf: block)
            previousPlain = block
            previousCipher = Array(ciphertext[start..<(start + 16)])
            start += 16
        }
        return plaintext
    }

    private static func failure(_ reason: String) -> IngestError {
        IngestError(format: .telegram, field: "p", reason: reason)
    }
}
