// HeraldIngest turns raw push payloads into Herald's canonical events (SEMANTICS §1).
//
// One payload (one line of input, or one document) goes in; either a list of events that
// pass `Event.validate()` comes out, or an ``IngestError`` naming the field at fault. The
// public entry points are `PayloadDecoder` (one payload) and `IngestSession` (a stream of
// them into a store); inside, `Ingest.decode` picks the adapter and `Ingest.detect` guesses
// the format from the payload's shape.
//
// The module owns:
// - a small tolerant JSON parser (trailing commas, bounded nesting, never traps),
// - one adapter per ecosystem: Herald JSONL, Telegram (plain and MTProto-encrypted,
//   Android and iOS forms), Zulip (E2EE, FCM and APNs forms), APNs, FCM (v1 and legacy),
//   Matrix push gateway (and Sygnal's APNs, FCM and Web Push forms), Web Push (RFC 8291,
//   wrapping another format), RongCloud IM (its push forms and the IM connection's messages),
// - a strings table for localized alerts (`LocalizedStrings`, Apple `.strings` or JSON),
// - the decryption of Telegram `p` pushes (MTProto 2.0, AES-256-IGE) and of Web Push bodies
//   (P-256 ECDH, HKDF, AES-128-GCM), built on swift-crypto only.
//
// It performs no I/O and reads no clock: the caller passes the receive time in
// ``IngestContext`` so a replayed log stays deterministic.

import HeraldEvents

/// The entry point: one raw payload in, canonical events (or an ``IngestError``) out.
package enum Ingest {
    /// The largest payload accepted, in bytes. Real pushes are at most a few KiB.
    package static let maxPayloadBytes = 8 << 20

    /// Decodes one payload (the bytes of one line or one document) into canonical events.
    ///
    /// - Parameters:
    ///   - payload: the raw bytes.
    ///   - format: the payload's format, or `nil` to detect it with ``detect(_:)``.
    ///   - context: account, receive time and keys.
    /// - Returns: events that each passed `Event.validate()` and belong to one account
    ///   (the context's, when it has one).
    /// - Throws: ``IngestError`` naming the format and the field at fault.
    package static func decode(
        _ payload: some Collection<UInt8>, format: PayloadFormat?, context: IngestContext
    ) throws(IngestError) -> IngestResult {
        guard payload.count <= maxPayloadBytes else {
            throw IngestError(format: format, field: "", reason: "payload of \(payload.count) bytes exceeds \(maxPayloadBytes)")
        }
        // Canonical lines are decoded in place; other formats work on a copy.
        let canonical = format == .herald ? payload.withContiguousStorageIfAvailable { buffer in
            Result { () throws(IngestError) in try HeraldAdapter.decode(UnsafeRawBufferPointer(buffer), context: context) }
        } : nil
        if let canonical { return try checked(canonical.get(), format: .herald, context: context) }
        let bytes = Array(payload)
        guard let format = format ?? detect(bytes) else {
            throw IngestError(
                format: nil, field: "",
                reason: "unrecognised payload: not a Herald, Telegram, Zulip, APNs, FCM, Matrix, Web Push or RongCloud payload")
        }
        let result: IngestResult
        switch format {
        case .herald: result = try HeraldAdapter.decode(bytes, context: context)
        case .telegram: result = try TelegramAdapter.decode(bytes, context: context)
        case .zulip: result = try ZulipAdapter.decode(bytes, context: context)
        case .apns: result = try APNsAdapter.decode(bytes, context: context)
        case .fcm: result = try FCMAdapter.decode(bytes, context: context)
        case .matrix: result = try MatrixAdapter.decode(bytes, context: context)
        case .webpush: result = try WebPushAdapter.decode(bytes, context: context)
        case .rongcloud: result = try RongCloudAdapter.decode(bytes, context: context)
        }
        return try checked(result, format: format, context: context)
    }

    /// `result`, once each event is checked to be valid and to belong to the context's account.
    private static func checked(_ result: IngestResult, format: PayloadFormat, context: IngestContext) throws(IngestError) -> IngestResult {
        for event in result.events {
            do {
                try event.validate()
            } catch {
                throw IngestError(format: format, field: error.field, reason: "produced an invalid \(event.type.rawValue) event: \(error.reason)")
            }
            if let account = context.account, event.account != account {
                throw IngestError(format: format, field: "account", reason: "payload is for account \"\(event.account)\", not \"\(account)\"")
            }
        }
        return result
    }

    /// Decodes one payload given as text (one line of input).
    package static func decode(_ payload: String, format: PayloadFormat?, context: IngestContext) throws(IngestError) -> IngestResult {
        try decode(Array(payload.utf8), format: format, context: context)
    }
}
