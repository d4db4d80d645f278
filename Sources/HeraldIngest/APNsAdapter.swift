import HeraldEvents

/// Adapts APNs payloads (`aps` plus the app's custom keys) to canonical events.
///
/// Mapping (see ``AppPushFields`` for chat, id, kind, date and account):
/// - an `aps.alert` (object with `title`/`subtitle`/`body`, or a plain string = body) →
///   `notify`, partial (a push), chat = `chat` › `room_id` › `aps.thread-id` › `app`, thread =
///   `aps.thread-id`, silent when `aps.interruption-level` is `passive`;
/// - a localized alert (`loc-key`/`loc-args`, `title-loc-key`/`title-loc-args`,
///   `subtitle-loc-key`/`subtitle-loc-args`) is rendered with the context's
///   ``LocalizedStrings`` (or its arguments joined), never stored as the bare key;
/// - Sygnal's Matrix form (matrix-org/sygnal `apnspushkin.py`: `room_id`, `event_id` beside
///   `aps`, a localized alert such as `MSG_FROM_USER_IN_ROOM_WITH_CONTENT`): chat = the room,
///   id = ``StableID`` of the event id (as ``MatrixAdapter`` names the same event), kind
///   `call` for `VOICE_CALL_FROM_USER` / `VIDEO_CALL_FROM_USER`;
///   Its event-id-only form (no alert) is a partial `notify` without text, as
///   ``MatrixAdapter`` makes of the same body; its `unread_count` / `missed_calls` a
///   trailing `note` (`counts: unread 2`);
/// - `aps.badge` → a trailing `note` recording the server's badge (`badge 3`), so the count
///   is kept for audit without changing state;
/// - no alert (background or badge-only push) → only the notes (`background push without
///   alert` when there is no badge either).
struct APNsAdapter {
    /// Sygnal's alert keys for an incoming call.
    static let sygnalCallKeys: Set<String> = ["VOICE_CALL_FROM_USER", "VIDEO_CALL_FROM_USER"]

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
        var sender: String?
        var kind = try AppPushFields.kind(root)
        var hasAlert = false
        if let alert = aps["alert"] {
            switch alert {
            case .string(let text):
                body = text
            case .object(let members):
                let alertFields = PayloadObject(members, path: aps.field("alert"), format: .apns)
                title = try text(alertFields, "title")
                if let subtitle = try text(alertFields, "subtitle"), !subtitle.isEmpty {
                    title = title.map { "\($0): \(subtitle)" } ?? subtitle
                }
                body = try text(alertFields, "body", locPrefix: "")
                if let key = try alertFields.string("loc-key") {
                    if Self.sygnalCallKeys.contains(key), root.has("room_id") { kind = .call }
                    sender = try Self.sygnalSender(key, args: alertFields.strings("loc-args") ?? [])
                }
            default:
                throw aps.error("alert", "expected a string or an object, got \(alert.typeName)")
            }
            hasAlert = true
        }
        let threadId = try aps.string("thread-id")
        // Sygnal's event-id-only form has no alert: the app fetches the event and shows it.
        let eventOnly = !hasAlert && root.has("room_id") && root.has("event_id")
        if hasAlert || eventOnly {
            let chat = try orElse(root.nonEmptyString("chat"), root.nonEmptyString("room_id"))
            events.append(Event(account: account, .notify(Event.Notify(
                chat: chat ?? threadId.flatMap { $0.isEmpty ? nil : $0 } ?? AppPushFields.appChat,
                kind: kind,
                id: try AppPushFields.objectID(root, payload: payload),
                date: try root.date("date") ?? context.receivedAt,
                silent: try aps.string("interruption-level") == "passive",
                partial: true,
                title: title, body: body, sender: try root.string("sender") ?? sender, thread: threadId))))
        }
        if let badge = try aps.integer("badge") {
            events.append(Event(account: account, .note(source: "apns", reason: "badge \(badge)")))
        }
        var counts: [String] = []
        for (key, name) in [("unread_count", "unread"), ("missed_calls", "missed_calls")] {
            if let count = try root.integer(key) {
                guard count >= 0 else { throw root.error(key, "must be >= 0, got \(count)") }
                counts.append("\(name) \(count)")
            }
        }
        if !counts.isEmpty {
            events.append(Event(account: account, .note(source: "apns", reason: "counts: " + counts.joined(separator: ", "))))
        }
        if events.isEmpty {
            events.append(Event(account: account, .note(source: "apns", reason: "background push without alert")))
        }
        return events
    }

    /// The alert's `name` text (`title`, `subtitle`, `body`), or its localized form
    /// (`<prefix>loc-key` / `<prefix>loc-args`, prefix `name-` unless given) rendered with the
    /// context's strings.
    func text(_ alert: PayloadObject, _ name: String, locPrefix: String? = nil) throws(IngestError) -> String? {
        if let text = try alert.string(name) { return text }
        let prefix = locPrefix ?? "\(name)-"
        let key = try alert.string("\(prefix)loc-key")
        let args = try alert.strings("\(prefix)loc-args") ?? []
        guard key != nil || !args.isEmpty else { return nil }
        return context.strings.render(key: key, args: args)
    }

    /// The sender named by one of Sygnal's alert keys: the first argument, except for an
    /// emote in a named room (`ACTION_FROM_USER_IN_ROOM`: room, sender, action).
    static func sygnalSender(_ key: String, args: [String]) -> String? {
        guard key.hasSuffix("_FROM_USER") || key.contains("_FROM_USER_") || key.hasPrefix("USER_INVITE_") else { return nil }
        let sender = key == "ACTION_FROM_USER_IN_ROOM" ? args.dropFirst().first : args.first
        return sender.flatMap { $0.isEmpty || $0 == " " ? nil : $0 }
    }
}
