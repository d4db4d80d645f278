import HeraldEvents

/// Adapts FCM HTTP v1 messages (`{"message": {"data": {…}, …}}`) to canonical events.
///
/// `message.data` values are strings (numbers are accepted too). Mapping (see
/// ``AppPushFields`` for chat, id, kind, date and account, read from `message.data`):
/// - one `notify`, partial (a push), title/body from `data`, else `message.notification`;
/// - the collapse key (`message.android.collapse_key`, else `message.collapse_key`) becomes
///   the `thread` when `data` names none: it is the sender's grouping of replaceable pushes;
/// - `data.silent` (`"1"`/`"true"`) marks it silent; `data.sender` is the sender.
/// A message with neither `data` nor `notification` is rejected (`message.data: missing`).
struct FCMAdapter {
    let context: IngestContext

    /// Decodes one FCM message.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .fcm)
        return IngestResult(format: .fcm, events: try FCMAdapter(context: context).adapt(root, payload: bytes), encrypted: false)
    }

    /// Adapts a message object; `payload` is hashed for the id when no id key is present.
    func adapt(_ root: PayloadObject, payload: [UInt8]) throws(IngestError) -> [Event] {
        guard let message = try root.object("message") else { throw root.error("message", "missing") }
        let data = try message.object("data")
        let notification = try message.object("notification")
        guard data != nil || notification != nil else { throw message.error("data", "missing") }
        let account = try context.resolveAccount(
            named: try data?.string("account"), field: data?.field("account") ?? "account", format: .fcm)
        let collapseKey = try orElse(message.object("android")?.string("collapse_key"), message.string("collapse_key"))
        let chat = try data?.nonEmptyString("chat") ?? AppPushFields.appChat
        return [Event(account: account, .notify(Event.Notify(
            chat: chat,
            kind: try AppPushFields.kind(data),
            id: try AppPushFields.objectID(data, payload: payload),
            date: try data?.date("date") ?? context.receivedAt,
            silent: try data?.flag("silent") ?? false,
            partial: true,
            title: try orElse(data?.string("title"), notification?.string("title")),
            body: try orElse(data?.string("body"), notification?.string("body")),
            sender: try data?.string("sender"),
            thread: try data?.string("thread") ?? collapseKey)))]
    }
}
