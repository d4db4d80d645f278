import Crypto

/// The application server's direction of ``WebPushCipher``: Herald only receives Web Push,
/// but tests build bodies with other plaintexts with it.
extension WebPushCipher {
    /// Encrypts `plaintext` into a one-record `aes128gcm` body for the receiver `keys`.
    static func encryptForTests(
        _ plaintext: [UInt8], to keys: WebPushKeys, senderPrivateKey: [UInt8], salt: [UInt8]
    ) throws -> [UInt8] {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: senderPrivateKey)
        let senderPublic = Array(sender.publicKey.x963Representation)
        let recordSize = UInt32(plaintext.count + 1 + 16)
        let header = salt + withUnsafeBytes(of: recordSize.bigEndian, Array.init) + [UInt8(senderPublic.count)] + senderPublic
        let secrets = try secrets(header: try self.header(of: header), keys: keys)
        let box = try AES.GCM.seal(plaintext + [2], using: SymmetricKey(data: secrets.cek), nonce: AES.GCM.Nonce(data: secrets.nonce))
        return header + Array(box.ciphertext) + Array(box.tag)
    }
}
