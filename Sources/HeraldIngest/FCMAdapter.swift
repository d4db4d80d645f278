import HeraldEvents

/// Adapts FCM messages to canonical events: HTTP v1 (`{"message": {"data": {…}, …}}`) and
/// legacy send requests (`{"to": …, "data": {…}, "notification": {…}, "collapse_key": …}`,
/// the message fields at the top level).
///
/// `data` values are strings (numbers are accepted too). Mapping (see ``AppPushFields`` for
/// chat, id, kind, date and account, read from `data`):
/// - one `notify`, partial (a push), title/body from `data`, else `notification`; a
///   notification's localized `title_loc_key`/`body_loc_key` (with `…_loc_args`) is rendered
///   with the context's ``LocalizedStrings``, else its arguments joined;
/// - `data.message_id`, when present, must be a decimal integer (FCM's own message ids are
///   not object ids), and is rejected naming the field otherwise;
/// - the collapse key (`android.collapse_key`, else `collapse_key`) becomes the `thread`
///   when `data` names none: it is the sender's grouping of replaceable pushes;
/// - `data.silent` (`"1"`/`"true"`) marks it silent; `data.sender` is the sender;
/// - Sygnal's Matrix form (matrix-org/sygnal `gcmpushkin.py` `_build_data`: `event_id`,
///   `room_id`, `type`, `sender`, `sender_display_name`, `room_name`, `content` — an object
///   in legacy requests, flattened to `content_<key>` strings in v1 —, `prio`, `unread`,
///   `missed_calls`) is mapped as ``MatrixAdapter`` maps the same notification: the room is
///   the chat, calls ring and end, counts become a note.
/// A message with neither `data` nor `notification` is rejected (`message.data: missing`).
struct FCMAdapter {
    let context: IngestContext

    /// Decodes one FCM message.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .fcm)
        return IngestResult(format: .fcm, events: try FCMAdapter(context: context).adapt(root, payload: bytes), encrypted: false)
    }

    /// Whether `members` is a legacy send request: a target and the message fields at the top.
    static func isLegacyRequest(_ members: [String: JSONValue]) -> Bool {
        ["to", "registration_ids", "condition"].contains { members[$0] != nil }
            && (members["data"]?.object != nil || members["notification"]?.object != nil)
            && members["message"] == nil
    }

    /// Adapts a message object; `payload` is hashed for the id when no id key is present.
    func adapt(_ root: PayloadObject, payload: [UInt8]) throws(IngestError) -> [Event] {
        let message: PayloadObject
        if Self.isLegacyRequest(root.members) {
            message = root
        } else {
            guard let inner = try root.object("message") else { throw root.error("message", "missing") }
            message = inner
        }
        let data = try message.object("data")
        let notification = try message.object("notification")
        guard data != nil || notification != nil else { throw message.error("data", "missing") }
        if let data, MatrixAdapter.isSygnalFlat(data.members) {
            return try MatrixAdapter(context: context).adapt(notification: try MatrixAdapter.notification(sygnalFields: data))
        }
        let account = try context.resolveAccount(
            named: try data?.string("account"), field: data?.field("account") ?? "account", format: .fcm)
        if let data, case .string(let messageId)? = data["message_id"], !messageId.isEmpty, JSONValue.parseInteger(messageId) == nil {
            throw data.error("message_id", "expected a decimal integer, got \"\(messageId)\"")
        }
        let collapseKey = try orElse(message.object("android")?.string("collapse_key"), message.string("collapse_key"))
        let chat = try data?.nonEmptyString("chat") ?? AppPushFields.appChat
        return [Event(account: account, .notify(Event.Notify(
            chat: chat,
            kind: try AppPushFields.kind(data),
            id: try AppPushFields.objectID(data, payload: payload),
            date: try data?.date("date") ?? context.receivedAt,
            silent: try data?.flag("silent") ?? false,
            partial: true,
            title: try orElse(data?.string("title"), text(notification, "title")),
            body: try orElse(data?.string("body"), text(notification, "body")),
            sender: try data?.string("sender"),
            thread: try data?.string("thread") ?? collapseKey)))]
    }

    /// The notification's `name` text, or its localized form (`<name>_loc_key`,
    /// `<name>_loc_args`) rendered with the context's strings.
    func text(_ notification: PayloadObject?, _ name: String) throws(IngestError) -> String? {
        guard let notification else { return nil }
        if let text = try notification.string(name) { return text }
        let key = try notification.string("\(name)_loc_key")
        let args = try notification.strings("\(name)_loc_args") ?? []
        guard key != nil || !args.isEmpty else { return nil }
        return context.strings.render(key: key, args: args)
    }
}
