/// The payload formats Herald can ingest.
public enum PayloadFormat: String, CaseIterable, Sendable {
    /// Herald's own canonical JSONL: one event per line.
    case herald
    /// A Telegram push, plain or MTProto-encrypted (`{"p": …}`): the Android form (`loc_key`,
    /// `custom`, …) or the iOS form (flat ids beside `aps`, `loc-key`, or a VoIP call payload).
    case telegram
    /// A Zulip mobile push: an E2EE payload, sealed (`encrypted_data`) or already decrypted,
    /// legacy FCM data, or the legacy APNs payload (`zulip` beside `aps`).
    case zulip
    /// An APNs payload (`aps` dictionary plus custom keys).
    case apns
    /// An FCM message: HTTP v1 (`message.data`) or a legacy send request (`to`, `data`,
    /// `notification`), including Sygnal's Matrix data.
    case fcm
    /// A Matrix push gateway `/_matrix/push/v1/notify` body, or Sygnal's flat Web Push payload.
    case matrix
    /// An RFC 8291 `aes128gcm` Web Push body that wraps another format.
    case webpush
    /// A RongCloud IM push in any form a device or app receives (iOS `userInfo` with `rc`,
    /// IMKit's local notification, Android FCM data, vendor extras, Xiaomi content,
    /// `PushNotificationMessage`), or a message of the app's IM connection (`messageUId`).
    case rongcloud
}

extension PayloadFormat: CustomStringConvertible {
    /// The format's name as the CLI spells it.
    public var description: String { rawValue }
}
