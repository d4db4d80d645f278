import HeraldEvents

/// Adapts Matrix push gateway bodies (`POST /_matrix/push/v1/notify`) to canonical events.
///
/// Mapping; the account always comes from the context (the body names none):
/// - a notification with an `event_id` → `notify`: chat = `room_id`, id = ``StableID`` of
///   the event id (SHA-256, first 8 bytes big-endian, top bit cleared), kind `call` for
///   `m.call.invite` else `message`, title = sender display name (or user id) and
///   `" @ <room_name>"` when the room has a name, body = `content.body`, silent when
///   `prio` is `low`, date = the receive time (Matrix sends none). It is `partial` when the
///   body is event-id-only (no `type`, `sender` or `content`);
/// - an `m.room.redaction` → `delete` of the redacted event (`content.redacts`, else the
///   top-level `redacts` of room versions before 11): chat = `room_id`, id = ``StableID`` of
///   the redacted event id, so the notification of that event clears;
/// - an edit (`content.m.relates_to.rel_type` `m.replace`) → `edit` of the original event
///   (`m.relates_to.event_id`, same chat and id rule): title as above, body =
///   `content.m.new_content.body`, else `content.body`; it changes only a notification still
///   active (see ``MatrixAdapter/relation(_:room:)``);
/// - `counts` → a trailing `note` with the server's counts (`counts: unread 2`); a
///   badge-only body (no event id) becomes just that note.
struct MatrixAdapter {
    let context: IngestContext

    /// Decodes one push gateway body.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .matrix)
        return IngestResult(format: .matrix, events: try MatrixAdapter(context: context).adapt(root), encrypted: false)
    }

    /// Adapts a body object.
    func adapt(_ root: PayloadObject) throws(IngestError) -> [Event] {
        guard let notification = try root.object("notification") else { throw root.error("notification", "missing") }
        let account = try context.resolveAccount(named: nil, field: "account", format: .matrix)
        var events: [Event] = []
        if let eventId = try notification.string("event_id"), !eventId.isEmpty {
            let room = try notification.requiredString("room_id")
            if let related = try relation(notification, room: room) {
                events.append(Event(account: account, related))
            } else {
                events.append(Event(account: account, .notify(try notify(notification, eventId: eventId, room: room))))
            }
        }
        var counts: [String] = []
        if let countFields = try notification.object("counts") {
            for key in ["unread", "missed_calls"] {
                if let count = try countFields.integer(key) { counts.append("\(key) \(count)") }
            }
        }
        if !counts.isEmpty {
            events.append(Event(account: account, .note(source: "matrix", reason: "counts: " + counts.joined(separator: ", "))))
        } else if events.isEmpty {
            events.append(Event(account: account, .note(source: "matrix", reason: "no event id and no counts")))
        }
        return events
    }

    /// The `notify` fields for a notification naming `eventId` in `room`.
    func notify(_ notification: PayloadObject, eventId: String, room: String) throws(IngestError) -> Event.Notify {
        let type = try notification.string("type")
        let content = try notification.object("content")
        let hasSender = try notification.nonEmptyString("sender") != nil
        let full = type != nil || content != nil || hasSender
        return Event.Notify(
            chat: room, kind: type == "m.call.invite" ? .call : .message, id: StableID.of(eventId),
            date: context.receivedAt, silent: try notification.string("prio") == "low", partial: !full,
            title: try Self.title(notification), body: try content?.string("body"), sender: try Self.senderName(notification))
    }

    /// The sender's display name, else their user id; `nil` when the body names neither.
    static func senderName(_ notification: PayloadObject) throws(IngestError) -> String? {
        try orElse(notification.nonEmptyString("sender_display_name"), notification.nonEmptyString("sender"))
    }

    /// The title: the sender's name, with `" @ <room_name>"` when the room has a name.
    static func title(_ notification: PayloadObject) throws(IngestError) -> String? {
        let roomName = try notification.nonEmptyString("room_name")
        return switch (try senderName(notification), roomName) {
        case (let sender?, let room?): "\(sender) @ \(room)"
        case (let sender?, nil): sender
        case (nil, let room): room
        }
    }
}
