// HeraldIngest turns raw push payloads into Herald's canonical events (SEMANTICS §1).
//
// One payload (one line of input, or one document) goes in; either a list of events that
// pass `Event.validate()` comes out, or an ``IngestError`` naming the field at fault. The
// entry point is ``Ingest/decode(_:format:context:)``; ``Ingest/detect(_:)`` guesses the
// format from the payload's shape.
//
// The module owns:
// - a small tolerant JSON parser (trailing commas, bounded nesting, never traps),
// - one adapter per ecosystem: Herald JSONL, Telegram (plain and MTProto-encrypted),
//   Zulip, APNs, FCM, Matrix push gateway, Web Push (RFC 8291, wrapping another format),
// - the decryption of Telegram `p` pushes (MTProto 2.0, AES-256-IGE) and of Web Push bodies
//   (P-256 ECDH, HKDF, AES-128-GCM), built on swift-crypto only.
//
// It performs no I/O and reads no clock: the caller passes the receive time in
// ``IngestContext`` so a replayed log stays deterministic.

/// The payload formats Herald can ingest.
public enum PayloadFormat: String, CaseIterable, Sendable {
    /// Herald's own canonical JSONL: one event per line.
    case herald
    /// A Telegram push (`loc_key`, `custom`, …), plain or MTProto-encrypted (`{"p": …}`).
    case telegram
    /// A Zulip mobile push: decrypted E2EE payload or legacy FCM data.
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
