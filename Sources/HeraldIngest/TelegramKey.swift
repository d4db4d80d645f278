import Crypto

/// A Telegram auth key (256 bytes) that can decrypt MTProto-encrypted push payloads.
///
/// Its ``keyId`` is what an encrypted push names in its first 8 bytes: the little-endian
/// `Int64` of bytes 12..<20 of SHA-1(key). An auth key belongs to one logged-in session, so a
/// key may carry its ``account``: a push it decrypts is that account's, whatever the payload
/// or `--account` say (a clash is rejected).
public struct TelegramKey: Sendable, Hashable, CustomStringConvertible {
    /// The length of an auth key in bytes.
    public static let byteCount = 256

    /// The 256 key bytes.
    public let bytes: [UInt8]
    /// The key id: little-endian `Int64` of SHA-1(key)[12..<20].
    public let keyId: Int64
    /// The account the key belongs to (`tg:14124122`), or `nil` when it may open pushes of
    /// any account.
    public let account: String?

    /// Creates a key from its 256 bytes, belonging to `account` (`nil` or `""`: any account).
    public init(bytes: some Collection<UInt8>, account: String? = nil) throws(IngestError) {
        let bytes = Array(bytes)
        guard bytes.count == Self.byteCount else {
            throw IngestError(
                format: .telegram, field: "telegramKey",
                reason: "an auth key is \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
        self.account = account.flatMap { $0.isEmpty ? nil : $0 }
        let digest = Array(Insecure.SHA1.hash(data: bytes))
        self.keyId = Int64(littleEndianBytes: digest[12..<20])
    }

    /// Creates a key from base64url (or base64) text, as `--telegram-key` takes it.
    public init(base64url: String, account: String? = nil) throws(IngestError) {
        guard let bytes = Base64URL.decode(base64url) else {
            throw IngestError(format: .telegram, field: "telegramKey", reason: "not base64url")
        }
        try self.init(bytes: bytes, account: account)
    }

    /// The key as base64url without padding.
    public var base64url: String { Base64URL.encode(bytes) }

    /// Names the key by id only: the key bytes are secret.
    public var description: String {
        "TelegramKey(id: \(keyId)" + (account.map { ", account: \($0)" } ?? "") + ")"
    }
}

extension Int64 {
    /// Reads 8 bytes as a little-endian integer.
    init(littleEndianBytes bytes: some Collection<UInt8>) {
        var value: UInt64 = 0
        for (shift, byte) in bytes.prefix(8).enumerated() { value |= UInt64(byte) << UInt64(8 * shift) }
        self.init(bitPattern: value)
    }
}
