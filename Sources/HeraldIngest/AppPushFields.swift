import HeraldEvents

/// Conventions shared by the generic app-push adapters (APNs and FCM), whose payloads carry
/// the app's own keys beside the platform's.
///
/// - chat: the `chat` key, else a Matrix `room_id` (Sygnal), else the platform's grouping key
///   (APNs `thread-id`), else `app`;
/// - object id: `message_id` › `msg_id` › `id` › `event_id` (Sygnal's Matrix event id, whose
///   ``StableID`` is the one ``MatrixAdapter`` gives the same event), the first present and
///   non-empty: a positive integer (or numeric string) as is, any other string (a UUID, an
///   id such as `0:1754385400%abc123`) as the ``StableID`` of its text, so two deliveries of
///   one message id are one object (FCM rejects a `data.message_id` that is not a decimal
///   integer first, see ``FCMAdapter``); failing all, ``StableID`` of the payload bytes as
///   received, so a redelivered payload keeps its identity. Other `*_id` keys are never
///   used: they may name a chat, a sender or a user (`chat_id`, `sender_id`, `user_id`)
///   shared by many messages, and an id taken from them would make every later message of
///   that chat a duplicate of the first;
/// - kind: the `kind` key (a Herald kind name), else `message`;
/// - date: the `date` key, else the receive time; account: the `account` key, else context.
enum AppPushFields {
    /// The chat used when a payload names no conversation.
    static let appChat = "app"

    /// The keys that identify a message, tried in order for the object id.
    static let idKeys = ["message_id", "msg_id", "id", "event_id"]

    /// The object id named by `fields`, or the digest of `payload`.
    static func objectID(_ fields: PayloadObject?, payload: [UInt8]) throws(IngestError) -> Int64 {
        if let fields {
            for key in idKeys {
                if let id = try identifier(fields, key) { return id }
            }
        }
        return StableID.of(bytes: payload)
    }

    /// The id a message-identifying key holds: a positive integer or numeric string as is,
    /// another non-empty string as its ``StableID``; `nil` when absent or empty.
    static func identifier(_ fields: PayloadObject, _ key: String) throws(IngestError) -> Int64? {
        switch fields[key] {
        case nil:
            return nil
        case .string(let text) where JSONValue.parseInteger(text) == nil:
            return text.isEmpty ? nil : StableID.of(text)
        case .string, .number:
            return try fields.id(key)
        case let value?:
            throw fields.error(key, "expected an integer or a string, got \(value.typeName)")
        }
    }

    /// The notification kind named by `fields` (`kind`), `message` by default.
    static func kind(_ fields: PayloadObject?) throws(IngestError) -> NotificationKind {
        guard let name = try fields?.string("kind") else { return .message }
        guard let kind = NotificationKind(rawValue: name) else {
            throw fields!.error("kind", "expected one of \(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }
}
