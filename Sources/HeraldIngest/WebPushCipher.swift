import Crypto

/// Decrypts RFC 8291 Web Push bodies (RFC 8188 `aes128gcm` content coding).
///
/// Body = `salt (16) ‖ rs (uint32 BE) ‖ idlen (1) ‖ keyid ‖ records`, where keyid is the
/// application server's public key (65 bytes, uncompressed P-256). Keys:
/// `ecdh_secret = ECDH(ua_private, as_public)`;
/// `IKM = HKDF(salt: auth_secret, ikm: ecdh_secret, info: "WebPush: info\0" ‖ ua_public ‖ as_public, 32)`;
/// `PRK = HKDF-Extract(salt, IKM)`; `CEK = HKDF-Expand(PRK, "Content-Encoding: aes128gcm\0", 16)`;
/// `NONCE = HKDF-Expand(PRK, "Content-Encoding: nonce\0", 12)`. Each record of `rs` bytes
/// is AES-128-GCM with nonce `NONCE ⊕ seq`; its plaintext ends with a delimiter (`0x01`, or
/// `0x02` in the last record) followed by zero padding.
enum WebPushCipher {
    /// The values derived for one body; exposed to tests to check RFC 8291's intermediates.
    struct Secrets: Hashable {
        var ecdhSecret: [UInt8]
        var ikm: [UInt8]
        var prk: [UInt8]
        var cek: [UInt8]
        var nonce: [UInt8]
    }

    /// The parsed header of a body.
    struct Header: Hashable {
        var salt: [UInt8]
        var recordSize: Int
        var senderPublicKey: [UInt8]
        /// Where the records start.
        var recordsOffset: Int
    }

    /// Parses the RFC 8188 header.
    static func header(of body: [UInt8]) throws(IngestError) -> Header {
        guard body.count >= 21 else { throw failure("body", "shorter than the 21-byte header") }
        let recordSize = Int(UInt32(body[16]) << 24 | UInt32(body[17]) << 16 | UInt32(body[18]) << 8 | UInt32(body[19]))
        guard recordSize >= 18 else { throw failure("header.rs", "record size must be >= 18, got \(recordSize)") }
        let idLength = Int(body[20])
        guard idLength == 65 else { throw failure("header.keyid", "expected the 65-byte sender public key, got \(idLength) bytes") }
        guard body.count >= 21 + idLength else { throw failure("header.keyid", "truncated") }
        return Header(
            salt: Array(body[0..<16]), recordSize: recordSize,
            senderPublicKey: Array(body[21..<(21 + idLength)]), recordsOffset: 21 + idLength)
    }

    /// Derives the secrets for a body from `header` with the receiver's `keys`.
    static func secrets(header: Header, keys: WebPushKeys) throws(IngestError) -> Secrets {
        let senderKey: P256.KeyAgreement.PublicKey
        do {
            senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.senderPublicKey)
        } catch {
            throw failure("header.keyid", "not a P-256 public key")
        }
        let shared: SharedSecret
        do {
            let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: keys.privateKey)
            shared = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        } catch {
            throw failure("header.keyid", "ECDH failed: \(error)")
        }
        let ecdhSecret = shared.withUnsafeBytes { Array($0) }
        let keyInfo = Array("WebPush: info".utf8) + [0] + keys.publicKey + header.senderPublicKey
        let prkKey = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: ecdhSecret), salt: keys.authSecret)
        let ikm = HKDF<SHA256>.expand(pseudoRandomKey: prkKey, info: keyInfo, outputByteCount: 32).withUnsafeBytes { Array($0) }
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: ikm), salt: header.salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return Secrets(
            ecdhSecret: ecdhSecret, ikm: ikm, prk: Array(prk),
            cek: cek.withUnsafeBytes { Array($0) }, nonce: nonce.withUnsafeBytes { Array($0) })
    }

    /// Decrypts `body` and returns the plaintext without delimiters and padding.
    static func decrypt(_ body: [UInt8], keys: WebPushKeys) throws(IngestError) -> [UInt8] {
        let header = try header(of: body)
        let secrets = try secrets(header: header, keys: keys)
        let key = SymmetricKey(data: secrets.cek)
        var plaintext: [UInt8] = []
        var offset = header.recordsOffset
        var sequence: UInt64 = 0
        guard offset < body.count else { throw failure("body", "no encrypted record") }
        while offset < body.count {
            let end = min(offset + header.recordSize, body.count)
            let record = body[offset..<end]
            let isLast = end == body.count
            guard record.count >= 17 else { throw failure("body", "record \(sequence) is shorter than its 16-byte tag plus 1") }
            var recordNonce = secrets.nonce
            for index in 0..<8 { recordNonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> UInt64(8 * (7 - index))) }
            let opened: [UInt8]
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: AES.GCM.Nonce(data: recordNonce), ciphertext: record.dropLast(16), tag: record.suffix(16))
                opened = Array(try AES.GCM.open(box, using: key))
            } catch {
                throw failure("body", "record \(sequence) failed authentication: wrong keys or corrupted body")
            }
            guard let delimiterIndex = opened.lastIndex(where: { $0 != 0 }) else {
                throw failure("body", "record \(sequence) has no padding delimiter")
            }
            let expected: UInt8 = isLast ? 2 : 1
            guard opened[delimiterIndex] == expected else {
                throw failure("body", "record \(sequence) padding delimiter is \(opened[delimiterIndex]), expected \(expected)")
            }
            plaintext.append(contentsOf: opened[..<delimiterIndex])
            offset = end
            sequence += 1
        }
        return plaintext
    }

    private static func failure(_ field: String, _ reason: String) -> IngestError {
        IngestError(format: .webpush, field: field, reason: reason)
    }
}
