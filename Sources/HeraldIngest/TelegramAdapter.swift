import HeraldEvents

/// Adapts Telegram push payloads (core.telegram.org/api/push-updates) to canonical events.
///
/// Fields may sit inside `data` or at the top level; `custom` may be an object or a string
/// holding one; numbers may be strings. `{"p": …}` payloads (or `{"data": {"p": …}}`, as FCM
/// delivers them on Android) are first decrypted with
/// ``TelegramCipher`` and the inner JSON is adapted the same way, with `encrypted` set.
///
/// Mapping (all `notify`/`edit` events are `partial: true`, content comes from the push):
/// - chat: `custom.channel_id` › `chat_id` › `from_id` › `encryption_id`, as
///   `channel:ID`, `chat:ID`, `user:ID`, `secret:ID`;
/// - account: for an encrypted push opened with a key that names its account, that account
///   (a `user_id` or a context account naming another one is rejected as a clash); else
///   `tg:<user_id>` when the payload has `user_id`, else the context's account;
/// - date: `custom.date` › `date` › the context's receive time;
/// - messages (any loc_key with `custom.msg_id`): kind `message`, or `mention` with
///   `custom.mention`; `PINNED_*` → `pinned`; `REACT_*`/`CHAT_REACT_*` → `reaction` (id = the
///   reacted message); `PHONE_CALL_REQUEST` → `call` (id = `custom.call_id`);
///   `ENCRYPTION_REQUEST` → `secretChat` (id = `custom.encryption_id`);
///   `custom.edit_date` turns a message into an `edit`;
/// - `MESSAGE_DELETED` → `delete` (`custom.messages`, chat when named); `READ_HISTORY` →
///   `read` (`custom.max_id`); `READ_REACTION` → `readReactions` (`custom.messages`, else
///   `custom.msg_id`); `SESSION_REVOKE` → `revoke` only when it came encrypted, else a `note`;
/// - an empty `loc_key` with `custom.max_id` and a chat → `read` (TDLib rejects such pushes,
///   but the server sends them when the history was read elsewhere: `badge` drops with it);
///   an empty `loc_key` without them → `note`;
/// - `DC_UPDATE`, `MESSAGE_MUTED`, `GEO_LIVE_PENDING`, and any other key without a
///   `custom.msg_id` → `note` (source `telegram`, reason = loc_key and why).
struct TelegramAdapter {
    /// The keys that never change notification state.
    static let stateFreeKeys: [String: String] = [
        "DC_UPDATE": "datacenter address update, no notification state",
        "MESSAGE_MUTED": "message in a muted chat, nothing to show",
        "GEO_LIVE_PENDING": "live-location reminder, no notification state",
    ]

    let context: IngestContext

    /// Decodes one Telegram payload, plain or encrypted.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .telegram)
        let adapter = TelegramAdapter(context: context)
        let encryptedHolder = try root.object("data").flatMap { $0.has("p") ? $0 : nil } ?? root
        if let p = try encryptedHolder.string("p") {
            let (inner, key) = try TelegramCipher.decrypt(p, keys: context.telegramKeys)
            let innerRoot: PayloadObject
            do {
                innerRoot = try PayloadObject.parse(inner, format: .telegram)
            } catch {
                throw IngestError(format: .telegram, field: "p", reason: "decrypted payload: \(error.reason)")
            }
            return IngestResult(format: .telegram, events: try adapter.adapt(innerRoot, decryptedWith: key), encrypted: true)
        }
        return IngestResult(format: .telegram, events: try adapter.adapt(root, decryptedWith: nil), encrypted: false)
    }

    /// Adapts a plain payload object (`key` is `nil`), or one decrypted with `key`.
    func adapt(_ root: PayloadObject, decryptedWith key: TelegramKey?) throws(IngestError) -> [Event] {
        let encrypted = key != nil
        let fields = try root.object("data") ?? root
        guard let locKey = try fields.string("loc_key") else { throw fields.error("loc_key", "missing") }
        let args = try fields.strings("loc_args") ?? []
        let custom = try fields.object("custom", asJSONText: true)
            ?? PayloadObject([:], path: fields.field("custom"), format: .telegram)
        let account = try context.resolveAccount(
            named: try fields.id("user_id").map { "tg:\($0)" }, field: fields.field("user_id"), format: .telegram,
            key: key.flatMap { key in key.account.map { (id: key.keyId, account: $0) } })
        let chat = try conversation(custom)

        func note(_ reason: String) -> [Event] {
            [Event(account: account, .note(source: "telegram", reason: reason))]
        }
        func requireChat() throws(IngestError) -> String {
            guard let chat else {
                throw IngestError(
                    format: .telegram, field: custom.path,
                    reason: "names no conversation (channel_id, chat_id, from_id or encryption_id)")
            }
            return chat
        }

        switch locKey {
        case "MESSAGE_DELETED":
            guard let ids = try custom.ids("messages") else { throw custom.error("messages", "missing") }
            return [Event(account: account, .delete(ids: ids, chat: chat))]
        case "READ_HISTORY":
            return [Event(account: account, .read(chat: try requireChat(), maxId: try custom.requiredID("max_id")))]
        case "READ_REACTION":
            let ids = try orElse(custom.ids("messages"), [custom.requiredID("msg_id")]) ?? []
            return [Event(account: account, .readReactions(chat: try requireChat(), ids: ids))]
        case "SESSION_REVOKE":
            if encrypted { return [Event(account: account, .revoke)] }
            return note("SESSION_REVOKE ignored: honoured only when the push came encrypted")
        case "":
            if let chat, let maxId = try custom.id("max_id") {
                return [Event(account: account, .read(chat: chat, maxId: maxId))]
            }
            return note("empty loc_key without custom.max_id and a chat: nothing to apply")
        default:
            break
        }
        if let why = Self.stateFreeKeys[locKey] { return note("\(locKey): \(why)") }

        let kind: NotificationKind
        let id: Int64
        if locKey == "PHONE_CALL_REQUEST" {
            kind = .call
            id = try custom.requiredID("call_id")
        } else if locKey == "ENCRYPTION_REQUEST" {
            kind = .secretChat
            id = try custom.requiredID("encryption_id")
        } else if let messageId = try custom.id("msg_id") {
            id = messageId
            if Self.isReaction(locKey) {
                kind = .reaction
            } else if locKey.hasPrefix("PINNED_") {
                kind = .pinned
            } else {
                kind = try custom.flag("mention") == true ? .mention : .message
            }
        } else {
            return note("\(locKey): no custom.msg_id, nothing to notify")
        }

        let text = TelegramText.render(locKey: locKey, args: args)
        let chatName = try requireChat()
        if kind.objectClass == .msg, try custom.integer("edit_date") != nil {
            return [Event(account: account, .edit(Event.Edit(
                chat: chatName, kind: kind, id: id, title: text.title, body: text.body, partial: true)))]
        }
        let date = try orElse(custom.date("date"), fields.date("date")) ?? context.receivedAt
        let silent = try orElse(custom.flag("silent"), fields.flag("silent")) ?? false
        let thread = try custom.id("topic_id").map { "topic:\($0)" }
        return [Event(account: account, .notify(Event.Notify(
            chat: chatName, kind: kind, id: id, date: date, silent: silent, partial: true,
            title: text.title, body: text.body, sender: text.sender, thread: thread)))]
    }

    /// The conversation named by `custom`, in Herald's chat form.
    func conversation(_ custom: PayloadObject) throws(IngestError) -> String? {
        if let id = try custom.id("channel_id") { return "channel:\(id)" }
        if let id = try custom.id("chat_id") { return "chat:\(id)" }
        if let id = try custom.id("from_id") { return "user:\(id)" }
        if let id = try custom.id("encryption_id") { return "secret:\(id)" }
        return nil
    }

    /// Whether `locKey` announces a reaction (`REACT_*`, `CHAT_REACT_*`, `CHANNEL_REACT_*`).
    static func isReaction(_ locKey: String) -> Bool {
        locKey.hasPrefix("REACT_") || locKey.hasPrefix("CHAT_REACT_") || locKey.hasPrefix("CHANNEL_REACT_")
    }
}
