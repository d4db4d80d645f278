import HeraldEvents

/// Adapts APNs payloads (`aps` plus the app's custom keys) to canonical events.
///
/// Mapping (see ``AppPushFields`` for chat, id, kind, date and account):
/// - an `aps.alert` (object with `title`/`subtitle`/`body`, or a plain string = body) →
///   `notify`, partial (a push), chat = `chat` › `aps.thread-id` › `app`, thread =
///   `aps.thread-id`, silent when `aps.interruption-level` is `passive`;
/// - `aps.badge` → a trailing `note` recording the server's badge (`badge 3`), so the count
///   is kept for audit without changing state;
/// - no alert (background or badge-only push) → only the notes (`background push without
///   alert` when there is no badge either).
struct APNsAdapter {
    let context: IngestContext

    /// Decodes one APNs payload.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .apns)
        return IngestResult(format: .apns, events: try APNsAdapter(context: context).adapt(root, payload: bytes), encrypted: false)
    }

    /// Adapts a payload object; `payload` is hashed for the id when no id key is present.
    func adapt(_ root: PayloadObject, payload: [UInt8]) throws(IngestError) -> [Event] {
        guard let aps = try root.object("aps") else { throw root.error("aps", "missing") }
        let account = try context.resolveAccount(named: try root.string("account"), field: root.field("account"), format: .apns)
        var events: [Event] = []
        var title: String?
        var body: String?
        var hasAlert = false
        if let alert = aps["alert"] {
            switch alert {
            case .string(let text):
                body = text
            case .object(let members):
                let alertFields = PayloadObject(members, path: aps.field("alert"), format: .apns)
                title = try alertFields.string("title")
                if let subtitle = try alertFields.string("subtitle"), !subtitle.isEmpty {
                    title = title.map { "\($0): \(subtitle)" } ?? subtitle
                }
                body = try orElse(alertFields.string("body"), alertFields.string("loc-key"))
            default:
                throw aps.error("alert", "expected a string or an object, got \(alert.typeName)")
            }
            hasAlert = true
        }
        let threadId = try aps.string("thread-id")
        if hasAlert {
            events.append(Event(account: account, .notify(Event.Notify(
                chat: try root.nonEmptyString("chat") ?? threadId.flatMap { $0.isEmpty ? nil : $0 } ?? AppPushFields.appChat,
                kind: try AppPushFields.kind(root),
                id: try AppPushFields.objectID(root, payload: payload),
                date: try root.date("date") ?? context.receivedAt,
                silent: try aps.string("interruption-level") == "passive",
                partial: true,
                title: title, body: body, sender: try root.string("sender"), thread: threadId))))
        }
        if let badge = try aps.integer("badge") {
            events.append(Event(account: account, .note(source: "apns", reason: "badge \(badge)")))
        } else if !hasAlert {
            events.append(Event(account: account, .note(source: "apns", reason: "background push without alert")))
        }
        return events
    }
}
