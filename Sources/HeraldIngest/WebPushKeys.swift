import Crypto

/// The receiving user agent's Web Push secrets (RFC 8291 §2): a P-256 private key and the
/// 16-byte authentication secret shared with the application server.
public struct WebPushKeys: Sendable, Hashable, CustomStringConvertible {
    /// The private key's 32-byte scalar.
    public let privateKey: [UInt8]
    /// The authentication secret (16 bytes).
    public let authSecret: [UInt8]

    /// Creates keys from raw bytes; the private key must be a valid P-256 scalar.
    public init(privateKey: some Collection<UInt8>, authSecret: some Collection<UInt8>) throws(IngestError) {
        let privateKey = Array(privateKey)
        let authSecret = Array(authSecret)
        guard (try? P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)) != nil else {
            throw IngestError(format: .webpush, field: "webPush.privateKey", reason: "not a 32-byte P-256 private key")
        }
        guard authSecret.count == 16 else {
            throw IngestError(format: .webpush, field: "webPush.authSecret", reason: "expected 16 bytes, got \(authSecret.count)")
        }
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// Creates keys from base64url (or base64) text.
    public init(privateKeyBase64url: String, authSecretBase64url: String) throws(IngestError) {
        guard let privateKey = Base64URL.decode(privateKeyBase64url) else {
            throw IngestError(format: .webpush, field: "webPush.privateKey", reason: "not base64url")
        }
        guard let authSecret = Base64URL.decode(authSecretBase64url) else {
            throw IngestError(format: .webpush, field: "webPush.authSecret", reason: "not base64url")
        }
        try self.init(privateKey: privateKey, authSecret: authSecret)
    }

    /// The receiver's public key, uncompressed (65 bytes, `ua_public` in RFC 8291).
    public var publicKey: [UInt8] {
        // The scalar was checked in init, so this cannot fail.
        guard let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey) else { return [] }
        return Array(key.publicKey.x963Representation)
    }

    /// Names no secret.
    public var description: String { "WebPushKeys(publicKey: \(Base64URL.encode(publicKey)))" }
}
