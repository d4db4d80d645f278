import Crypto
import _CryptoExtras

/// The server's direction of ``TelegramCipher``: Herald never sends encrypted pushes, but
/// tests build payloads beyond the published vector with it.
extension TelegramCipher {
    /// AES-256-IGE encryption: `c[i] = E(p[i] ⊕ c[i-1]) ⊕ p[i-1]`, with `c[-1] = iv[0..<16]`,
    /// `p[-1] = iv[16..<32]`. `plaintext` must be a multiple of 16 bytes.
    static func encryptIGE(_ plaintext: [UInt8], aesKey: [UInt8], iv: [UInt8]) throws -> [UInt8] {
        precondition(plaintext.count % 16 == 0 && iv.count == 32)
        let key = SymmetricKey(data: aesKey)
        var previousCipher = Array(iv[0..<16])
        var previousPlain = Array(iv[16..<32])
        var ciphertext: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 16)
        for start in stride(from: 0, to: plaintext.count, by: 16) {
            for offset in 0..<16 { block[offset] = plaintext[start + offset] ^ previousCipher[offset] }
            try AES.permute(&block, key: key)
            for offset in 0..<16 { block[offset] ^= previousPlain[offset] }
            ciphertext.append(contentsOf: block)
            previousCipher = block
            previousPlain = Array(plaintext[start..<(start + 16)])
        }
        return ciphertext
    }
}

extension TelegramKey {
    /// A key with an arbitrary id, for tests that need a key claiming another key's id.
    init(unchecked bytes: [UInt8], keyId: Int64) {
        self.bytes = bytes
        self.keyId = keyId
        self.account = nil
    }
}
