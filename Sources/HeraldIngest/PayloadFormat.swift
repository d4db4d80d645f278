/// The payload formats Herald can ingest.
public enum PayloadFormat: String, CaseIterable, Sendable {
    /// Herald's own canonical JSONL: one event per line.
    case herald
    /// A Telegram push (`loc_key`, `custom`, …), plain or MTProto-encrypted (`{"p": …}`).
    case telegram
    /// A Zulip mobile push: an E2EE payload, sealed (`encrypted_data`) or already decrypted, or
    /// legacy FCM data.
    case zulip
    /// An APNs payload (`aps` dictionary plus custom keys).
    case apns
    /// An FCM HTTP v1 message (`message.data`).
    case fcm
    /// A Matrix push gateway `/_matrix/push/v1/notify` body.
    case matrix
    /// An RFC 8291 `aes128gcm` Web Push body that wraps another format.
    case webpush
}

extension PayloadFormat: CustomStringConvertible {
    /// The format's name as the CLI spells it.
    public var description: String { rawValue }
}
