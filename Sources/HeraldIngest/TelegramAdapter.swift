import HeraldEvents

/// Adapts Telegram push payloads (core.telegram.org/api/push-updates) to canonical events.
///
/// ``TelegramPush`` reads the Android and iOS shapes; `{"p": …}` payloads (or
/// `{"data": {"p": …}}`, as FCM delivers them on Android, or inside an FCM v1 request's
/// `message.data`) are first decrypted with
/// ``TelegramCipher`` and the inner JSON is adapted the same way, with `encrypted` set.
/// `schema/telegram-loc-keys.md` lists every key and its mapping.
///
/// Mapping (all `notify`/`edit` events are `partial: true`, content comes from the push):
/// - chat: `channel_id` › `chat_id` › `from_id` › `encryption_id` (in `custom`, or flat on
///   iOS), as `channel:ID`, `chat:ID`, `user:ID`, `secret:ID`;
/// - account: for an encrypted push opened with a key that names its account, that account
///   (a `user_id` or a context account naming another one is rejected as a clash); else
///   `tg:<user_id>` when the payload has `user_id`, else the context's account;
/// - date: `custom.date` › `date` › FCM's delivery time (the `date` beside `data`,
///   `google.sent_time`) within TDLib's window › the context's receive time; silent when
///   `silent` is present and not `0`/`false` (TDLib: presence; Telegram-iOS: non-zero);
/// - messages (any key with `msg_id`): kind `message`, or `mention` with `mention`; `PINNED_*`
///   → `pinned`; `REACT_*`/`CHAT_REACT_*`/`CHANNEL_REACT_*` → `reaction` of the message
///   (id = `msg_id`, one reaction notification per message) and an `edit` of it with the
///   push's text, so a later reaction from another person shows instead of being dropped;
///   `edit_date` turns a message into an `edit`, `partial` like the push notification it
///   edits (SEMANTICS 1.2 applies an edit only to a notification of the same `partial`);
///   `topic_id` is the thread `topic:<id>`;
/// - calls: `PHONE_CALL_REQUEST`/`VIDEO_CALL_REQUEST` (and `CONF_*`) → `call` (id = `call_id`);
///   `*_CALL_MISSED`/`*_CALL_DECLINE`/`*_CALL_END*` → `endCall` of `call_id`, followed by a
///   `message` notify when the push names the call's service message (`msg_id`);
/// - secret chats: `ENCRYPTION_REQUEST` → `secretChat` (id = `encryption_id`: TDLib's new
///   secret chat notice, made only for a chat the user did not start); `ENCRYPTION_ACCEPT` →
///   `note` (the peer accepted the user's own request: TDLib never notifies an outbound
///   secret chat); `ENCRYPTED_MESSAGE` (no `msg_id`) → `secretChat` "new secret message"
///   (id = `random_id` when positive, else ``StableID`` of `random_id:<value>`, else
///   `encryption_id`);
/// - `MESSAGE_ANNOUNCEMENT` → a `message` from Telegram's service account, chat `user:777000`
///   (as TDLib shows it), body = `message`, id = ``StableID`` of
///   `announcement:<custom.announcement>` (that chat's real messages have small ids);
/// - `MESSAGE_DELETED` → `delete` (`messages`, else `msg_id`; chat when named);
///   `READ_HISTORY` → `read` (`max_id`: as TDLib's `read_history_inbox`, it leaves mention
///   notifications, and no push key reads mentions, so none becomes `readMentions`);
///   `MESSAGE_MUTED` → `note` (no mute date comes by push); `READ_REACTION` → `readReactions` (`messages`, else
///   `msg_id`; it clears the message's reaction notification);
///   `SESSION_REVOKE` → `revoke` only when it came encrypted, else a `note`;
/// - an empty `loc_key` with `max_id` and a chat → `read`; without them → `note`;
/// - an iOS push with only rendered text (`aps.alert`, no key): a call when it has `call_id`,
///   a reaction when marked (`r`/`react_emoji`), a `secretChat` in a secret chat, else a
///   message; title and body from the alert;
/// - keys that change no notification state (``stateFreeKeys``, `STORY_*`, `READ_STORIES`,
///   …) and any key without the id its mapping needs → `note` (source `telegram`, reason =
///   the key and why).
struct TelegramAdapter {
    /// The keys that never change notification state, with the reason recorded in the note.
    static let stateFreeKeys: [String: String] = [
        "DC_UPDATE": "datacenter address update, no notification state",
        "MESSAGE_MUTED": "message in a muted chat, nothing to show",
        "GEO_LIVE_PENDING": "live-location reminder, no notification state",
        "LOCKED_MESSAGE": "message hidden by the app's passcode lock, nothing to show",
        "AUTH_REGION": "login from a new region, not a chat notification",
        "AUTH_UNKNOWN": "login from an unknown device, not a chat notification",
        "OAUTH_REQUEST": "login request for a website, not a chat notification",
        "READ_STORIES": "stories read, stories are not notifications here",
        "STORY_DELETED": "story deleted, stories are not notifications here",
        // TDLib drops the push (NotificationManager.cpp `process_push_notification_payload`:
        // `ENCRYPTION_*` → error 406) and makes its new-secret-chat notification only for a
        // chat that is not outbound (MessagesManager.cpp `force_create_dialog`:
        // `!get_secret_chat_is_outbound`); an accept answers the user's own request.
        "ENCRYPTION_ACCEPT": "the peer accepted the user's secret chat request, TDLib notifies no outbound secret chat",
    ]

    /// Telegram's service notifications account, which TDLib shows announcements from.
    static let serviceChat = "user:777000"

    let context: IngestContext

    /// Decodes one Telegram payload, plain or encrypted.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .telegram)
        let adapter = TelegramAdapter(context: context)
        let encryptedHolder = try root.fcmData().flatMap { $0.has("p") ? $0 : nil } ?? root
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
        let push = try TelegramPush(root)
        let account = try context.resolveAccount(
            named: try push.fields.id("user_id").map { "tg:\($0)" }, field: push.fields.field("user_id"), format: .telegram,
            key: key.flatMap { key in key.account.map { (id: key.keyId, account: $0) } })
        let scope = Scope(push: push, account: account, chat: try conversation(push.custom), encrypted: key != nil,
            receivedAt: context.receivedAt)
        guard let locKey = push.locKey else { return try scope.renderedAlert() }
        return try scope.apply(locKey)
    }

    /// The conversation named by `custom`, in Herald's chat form.
    func conversation(_ custom: PayloadObject) throws(IngestError) -> String? {
        if let id = try custom.id("channel_id") { return "channel:\(id)" }
        if let id = try custom.id("chat_id") { return "chat:\(id)" }
        if let id = try custom.id("from_id") { return "user:\(id)" }
        if let id = try custom.id("encryption_id") { return "secret:\(id)" }
        return nil
    }

    /// Whether `locKey` announces a reaction to a message (`REACT_*`, `CHAT_REACT_*`,
    /// `CHANNEL_REACT_*`; not `REACT_STORY*`, a reaction to a story).
    static func isReaction(_ locKey: String) -> Bool {
        (locKey.hasPrefix("REACT_") || locKey.hasPrefix("CHAT_REACT_") || locKey.hasPrefix("CHANNEL_REACT_"))
            && !locKey.hasPrefix("REACT_STORY")
    }

    /// What a call key does to the call it names.
    enum CallAction {
        case ring, end
    }

    /// The call action of `locKey`, or `nil` when it is not a call key.
    static func callAction(_ locKey: String) -> CallAction? {
        let prefixes = ["PHONE_CALL_", "VIDEO_CALL_", "CONF_CALL_", "CONF_VIDEOCALL_"]
        guard let prefix = prefixes.first(where: locKey.hasPrefix) else { return nil }
        return locKey.dropFirst(prefix.count) == "REQUEST" ? .ring : .end
    }
}
