/// A Zulip E2EE push key: the secretbox key a client registered with its Zulip server
/// (`POST /mobile_push/register`), which decrypts the `encrypted_data` of its pushes.
///
/// As registered, `push_key` is base64 of 33 bytes: the prefix `0x31` (libsodium
/// `crypto_secretbox_easy`) and the 32-byte key. Pushes name their key by `push_key_id` (an
/// unsigned 32-bit integer chosen by the client; Zulip 11 named it `push_account_id`).
public struct ZulipPushKey: Sendable, Hashable, CustomStringConvertible {
    /// The algorithm prefix of a registered push key: libsodium's secretbox.
    package static let secretboxPrefix: UInt8 = 0x31
    /// The length of the key proper (`crypto_secretbox_KEYBYTES`).
    package static let keyCount = 32

    /// The id pushes name it by.
    public let id: Int64
    /// The 32 key bytes (without the prefix).
    public let bytes: [UInt8]

    /// Creates a key from its id and its registered form: base64 (or base64url) of
    /// `0x31 ‖ key (32)`.
    public init(id: Int64, pushKey: String) throws(IngestError) {
        guard (0...Int64(UInt32.max)).contains(id) else {
            throw Self.failure("push_key_id must be an unsigned 32-bit integer, got \(id)")
        }
        guard let decoded = Base64URL.decode(pushKey.utf8) else { throw Self.failure("push_key is not base64") }
        guard decoded.count == 1 + Self.keyCount, decoded[0] == Self.secretboxPrefix else {
            throw Self.failure(
                "push_key must be \(1 + Self.keyCount) bytes starting with 0x31 (secretbox), got \(decoded.count) bytes"
                    + (decoded.first.map { ", starting with 0x" + String($0, radix: 16) } ?? ""))
        }
        self.id = id
        self.bytes = Array(decoded.dropFirst())
    }

    /// Creates a key from `ID:PUSH_KEY`, as `--zulip-push-key` takes it.
    public init(argument: String) throws(IngestError) {
        guard let colon = argument.firstIndex(of: ":"), let id = Int64(argument[..<colon]) else {
            throw Self.failure("expected PUSH_KEY_ID:PUSH_KEY (for example 2408:MTaUDJ…)")
        }
        try self.init(id: id, pushKey: String(argument[argument.index(after: colon)...]))
    }

    /// Names the key by id only: the key bytes are secret.
    public var description: String { "ZulipPushKey(id: \(id))" }

    private static func failure(_ reason: String) -> IngestError {
        IngestError(format: .zulip, field: "zulipPushKey", reason: reason)
    }
}
