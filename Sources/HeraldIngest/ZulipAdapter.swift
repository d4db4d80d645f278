import HeraldEvents

/// Adapts Zulip mobile push payloads to canonical events.
///
/// Three shapes are accepted: the decrypted Zulip 11+ E2EE payload (`type`, `realm_url`,
/// integer ids, `recipient_type` `channel`/`direct`), the legacy FCM data payload
/// (`event`, `realm_uri`, every value a string, `recipient_type` `stream`/`private`,
/// `zulip_message_id(s)`), and the legacy APNs payload (zerver/lib/push_notifications.py,
/// `get_message_payload_apns` / `get_remove_payload_apns`): the same fields under a top-level
/// `zulip` object beside `aps`, a message naming itself by `message_ids: [id]` with no
/// `event` and its text in `aps.alert` (`title`, `subtitle`, `body`), a removal with
/// `event: "remove"` and `zulip_message_ids` as a comma-separated string. (That form says a
/// message mentions the user only in the alert's localized subtitle, so only a group mention,
/// `mentioned_user_group_id`, makes it a `mention`.) A `push_account_id`/`push_key_id`
/// wrapper is unwrapped (its fields sit beside them or under `data`). An encrypted one (`encrypted_data`, FCM data or
/// APNs payload, top level or under `data`) is opened with the ``ZulipPushKey`` its
/// `push_key_id` (Zulip 11: `push_account_id`) names (``ZulipCipher``), and the JSON inside
/// is adapted like a plain payload, with ``IngestResult/encrypted`` set.
///
/// Mapping:
/// - account: `zulip:<realm_url>|<user_id>`, the realm URL given a trailing `/` when it has
///   none, so both shapes of one realm give one account (`zulip:https://chat.example/|10`);
/// - chat: `stream:<channel_id>:<topic>` for channel messages; `dm:<ids>` for direct
///   messages, the ascending set of `recipient_user_ids` (or legacy `pm_users`) plus the
///   sender and the receiving user;
/// - `message` → `notify` (partial: a push may truncate content), id = `message_id`, date =
///   `time`, kind `mention` when `mentioned_user_group_id` is present or `trigger` is a
///   mention trigger, title = `"<channel> > <topic>"` or the sender's name, body = `content`;
/// - `remove` → `delete` without chat (`message_ids` / `zulip_message_ids`). Zulip removes by
///   message id whatever triggered the notification, and under SEMANTICS 1.2 a `delete` clears
///   the listed objects' notifications in every group and ends their unread mentions, so
///   mentions clear too; no `readMentions` is added (it needs a chat, which a removal never
///   names; see `schema/zulip-push.md`);
/// - `test` and unknown types → `note`.
struct ZulipAdapter {
    /// Legacy `trigger` values that mean the user (or everyone) was mentioned.
    static let mentionTriggers: Set<String> = [
        "mentioned", "wildcard_mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned",
        "followed_topic_wildcard_mentioned",
    ]

    let context: IngestContext

    /// Decodes one Zulip payload, plain or encrypted.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .zulip)
        let adapter = ZulipAdapter(context: context)
        let encryptedHolder = try root.fcmData().flatMap { $0.has("encrypted_data") ? $0 : nil } ?? root
        if encryptedHolder.has("encrypted_data") {
            let inner = try decrypt(encryptedHolder, keys: context.zulipPushKeys)
            let innerRoot: PayloadObject
            do {
                innerRoot = try PayloadObject.parse(inner, format: .zulip)
            } catch {
                throw encryptedHolder.error("encrypted_data", "decrypted payload: \(error.reason)")
            }
            guard !innerRoot.has("encrypted_data") else {
                throw encryptedHolder.error("encrypted_data", "decrypted payload is itself encrypted")
            }
            return IngestResult(format: .zulip, events: try adapter.adapt(innerRoot), encrypted: true)
        }
        return IngestResult(format: .zulip, events: try adapter.adapt(root), encrypted: false)
    }

    /// The plaintext of an encrypted wrapper: `encrypted_data` (base64 of `nonce ‖ MAC ‖
    /// ciphertext`) opened with the key its `push_key_id` (or `push_account_id`) names.
    static func decrypt(_ wrapper: PayloadObject, keys: [ZulipPushKey]) throws(IngestError) -> [UInt8] {
        let idField = wrapper.has("push_key_id") ? "push_key_id" : "push_account_id"
        guard let keyId = try wrapper.integer(idField) else {
            throw wrapper.error("push_key_id", "missing: an encrypted payload names its key by push_key_id")
        }
        guard let key = keys.first(where: { $0.id == keyId }) else {
            let known = keys.isEmpty
                ? "the context holds no key (IngestContext.zulipPushKeys)" : "known ids: " + keys.map { String($0.id) }.joined(separator: ", ")
            throw wrapper.error(idField, "no Zulip push key with id \(keyId); \(known)")
        }
        guard let text = try wrapper.string("encrypted_data"), let box = Base64URL.decode(text.utf8) else {
            throw wrapper.error("encrypted_data", "expected a base64 string")
        }
        do {
            return try ZulipCipher.open(box, key: key)
        } catch {
            throw wrapper.error("encrypted_data", error.reason)
        }
    }

    /// The object holding the payload's fields, past any wrapper: the root, its `zulip`
    /// object (APNs), or its FCM data (`data`, or `message.data` of the FCM v1 request the
    /// server sends).
    static func unwrap(_ root: PayloadObject) throws(IngestError) -> PayloadObject {
        if root.has("realm_url") || root.has("realm_uri") { return root }
        if let zulip = try root.object("zulip") { return zulip }
        return try root.fcmData() ?? root
    }

    /// The `aps.alert` object of an APNs payload, which holds a message's text there.
    static func apnsAlert(_ root: PayloadObject) throws(IngestError) -> PayloadObject? {
        guard let aps = try root.object("aps") else { return nil }
        if case .string(let body)? = aps["alert"] {
            return PayloadObject(["body": .string(body)], path: aps.field("alert"), format: .zulip)
        }
        return try aps.object("alert")
    }

    /// Adapts a payload object.
    func adapt(_ root: PayloadObject) throws(IngestError) -> [Event] {
        let fields = try Self.unwrap(root)
        guard var realm = try orElse(fields.string("realm_url"), fields.string("realm_uri")), !realm.isEmpty else {
            throw fields.error("realm_url", "missing")
        }
        if !realm.hasSuffix("/") { realm += "/" }
        let userId = try fields.requiredID("user_id")
        let account = try context.resolveAccount(
            named: "zulip:\(realm)|\(userId)", field: fields.field("user_id"), format: .zulip)
        // An APNs message payload names no event: its `message_ids` make it a message.
        let impliedType = fields.has("message_ids") && root.has("aps") ? "message" : nil
        guard let type = try orElse(orElse(fields.string("type"), fields.string("event")), impliedType) else {
            throw fields.error("type", "missing")
        }
        switch type {
        case "message":
            return [try message(fields, account: account, userId: userId, alert: Self.apnsAlert(root))]
        case "remove":
            let ids = try orElse(orElse(fields.ids("message_ids"), fields.ids("zulip_message_ids")), fields.ids("zulip_message_id"))
            guard let ids else { throw fields.error("message_ids", "missing") }
            return [Event(account: account, .delete(ids: ids, chat: nil))]
        case "test":
            return [Event(account: account, .note(source: "zulip", reason: "test notification"))]
        default:
            return [Event(account: account, .note(source: "zulip", reason: "unknown event type \"\(type)\", ignored"))]
        }
    }

    /// The `notify` for a message payload; `alert` is the APNs alert holding its text, if any.
    func message(_ fields: PayloadObject, account: String, userId: Int64, alert: PayloadObject?) throws(IngestError) -> Event {
        guard let id = try orElse(orElse(fields.id("message_id"), fields.id("zulip_message_id")), fields.ids("message_ids")?.first) else {
            throw fields.error("message_id", "missing")
        }
        let alertTitle = try alert?.nonEmptyString("title")
        let recipientIsOnePerson = try fields.string("recipient_type") == "private" && !fields.has("pm_users")
        // The APNs form has no sender name; a 1:1 alert's title is the sender's name.
        let senderName = try orElse(fields.string("sender_full_name"), recipientIsOnePerson ? alertTitle : nil)
        let chat: String
        let title: String?
        let recipientType = try fields.requiredString("recipient_type")
        switch recipientType {
        case "channel", "stream":
            guard let channelId = try orElse(fields.id("channel_id"), fields.id("stream_id")) else {
                throw fields.error("channel_id", "missing")
            }
            guard let topic = try fields.string("topic") else { throw fields.error("topic", "missing") }
            chat = "stream:\(channelId):\(topic)"
            if let channelName = try orElse(fields.string("channel_name"), fields.string("stream")) {
                title = "\(channelName) > \(topic)"
            } else {
                // The APNs alert's title is "#channel > topic" when the payload names no channel.
                title = alertTitle ?? "#\(channelId) > \(topic)"
            }
        case "direct", "private":
            let senderId = try fields.requiredID("sender_id")
            var users = Set(try orElse(fields.ids("recipient_user_ids"), fields.ids("pm_users")) ?? [])
            users.insert(senderId)
            users.insert(userId)
            chat = "dm:" + users.sorted().map(String.init).joined(separator: ",")
            title = senderName ?? alertTitle
        default:
            throw fields.error("recipient_type", "expected channel, stream, direct or private, got \"\(recipientType)\"")
        }
        let trigger = try fields.string("trigger")
        let mentioned = fields.has("mentioned_user_group_id") || trigger.map(Self.mentionTriggers.contains) == true
        return Event(account: account, .notify(Event.Notify(
            chat: chat, kind: mentioned ? .mention : .message, id: id,
            date: try fields.date("time") ?? context.receivedAt, partial: true,
            title: title,
            body: try orElse(orElse(fields.string("content"), fields.string("content_truncated")), alert?.string("body")),
            sender: senderName)))
    }
}
