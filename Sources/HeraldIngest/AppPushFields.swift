import HeraldEvents

/// Conventions shared by the generic app-push adapters (APNs and FCM), whose payloads carry
/// the app's own keys beside the platform's.
///
/// - chat: the `chat` key, else the platform's grouping key (APNs `thread-id`), else `app`;
/// - object id: `message_id` › `msg_id` › `id` › the first other key ending in `_id`
///   (alphabetically) holding a positive integer; failing all, ``StableID`` of the payload
///   bytes as received, so a redelivered payload keeps its identity;
/// - kind: the `kind` key (a Herald kind name), else `message`;
/// - date: the `date` key, else the receive time; account: the `account` key, else context.
enum AppPushFields {
    /// The chat used when a payload names no conversation.
    static let appChat = "app"

    /// The keys tried first for the object id, in order.
    static let idKeys = ["message_id", "msg_id", "id"]

    /// The object id named by `fields`, or the digest of `payload`.
    static func objectID(_ fields: PayloadObject?, payload: [UInt8]) throws(IngestError) -> Int64 {
        if let fields {
            for key in idKeys {
                if let id = try fields.id(key) { return id }
            }
            for key in fields.members.keys.sorted() where key.hasSuffix("_id") {
                if let id = fields[key]?.integer, id > 0 { return id }
            }
        }
        return StableID.of(bytes: payload)
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
