import HeraldEvents

/// Adapts Matrix push gateway bodies (`POST /_matrix/push/v1/notify`) to canonical events.
///
/// Sygnal's flat Web Push payload (matrix-org/sygnal `webpushpushkin.py` `_build_payload`:
/// `room_id`, `event_id`, `type`, `sender`, `content`, `unread`, … at the top level, as a
/// decrypted Web Push body holds it) is read as the notification it was built from.
///
/// Mapping; the account always comes from the context (the body names none):
/// - a notification with an `event_id` → `notify`: chat = `room_id`, id = ``StableID`` of
///   the event id (SHA-256, first 8 bytes big-endian, top bit cleared), kind `mention` when
///   a device's `tweaks.highlight` is true (the homeserver matched a mention rule), else
///   `message`; title = sender display name (or user id) and
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
/// - a call invite (`m.call.invite`) → `notify` of kind `call`, id = ``StableID`` of
///   `content.call_id` (else of the event id); a hang-up, rejection or answer
///   (`m.call.hangup`, `m.call.reject`, `m.call.answer`) → `endCall` of that call id, so the
///   call notification clears (see ``MatrixAdapter/callEnd(_:room:)``);
/// - an invite of the user (`m.room.member`, membership `invite`, `user_is_target` or
///   `state_key` not naming someone else) → that `notify` with title = room name (else the
///   inviter) and body "Alice invited you to Room" (see ``MatrixAdapter/isInviteForUser(_:account:)``);
/// - a badge-only body (no event id) with `counts.unread` 0, the push a homeserver sends when
///   the user has read everything → `readAll` without a chat (SEMANTICS 1.2); other `counts`
///   (never negative) → a trailing `note` with the server's counts (`counts: unread 2`), a
///   badge-only body becoming just that note: a count names no room, so Herald cannot know
///   which notifications were read (see ``MatrixAdapter/countEvents(_:account:hasEvent:)``).
struct MatrixAdapter {
    let context: IngestContext

    /// Decodes one push gateway body.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .matrix)
        return IngestResult(format: .matrix, events: try MatrixAdapter(context: context).adapt(root), encrypted: false)
    }

    /// Adapts a body object.
    func adapt(_ root: PayloadObject) throws(IngestError) -> [Event] {
        if !root.has("notification"), Self.isSygnalFlat(root.members) {
            // Sygnal's Web Push payload: the notification's fields at the top level.
            return try adapt(notification: try Self.notification(sygnalFields: root))
        }
        guard let notification = try root.object("notification") else { throw root.error("notification", "missing") }
        return try adapt(notification: notification)
    }

    /// Adapts a notification object (the body's, or one built from Sygnal's FCM data).
    func adapt(notification: PayloadObject) throws(IngestError) -> [Event] {
        let account = try context.resolveAccount(named: nil, field: "account", format: notification.format)
        var events: [Event] = []
        if let eventId = try notification.string("event_id"), !eventId.isEmpty {
            let room = try notification.requiredString("room_id")
            if let ended = try callEnd(notification, room: room) {
                events.append(Event(account: account, ended))
            } else if let related = try relation(notification, room: room) {
                events.append(Event(account: account, related))
            } else {
                var fields = try notify(notification, eventId: eventId, room: room)
                if try isInviteForUser(notification, account: account) {
                    (fields.title, fields.body) = try Self.inviteText(notification)
                }
                events.append(Event(account: account, .notify(fields)))
            }
        }
        events += try countEvents(notification, account: account, hasEvent: !events.isEmpty)
        return events
    }

    /// The `notify` fields for a notification naming `eventId` in `room`.
    func notify(_ notification: PayloadObject, eventId: String, room: String) throws(IngestError) -> Event.Notify {
        let type = try notification.string("type")
        let content = try notification.object("content")
        let hasSender = try notification.nonEmptyString("sender") != nil
        let full = type != nil || content != nil || hasSender
        let kind: NotificationKind
        var id = StableID.of(eventId)
        if type == Self.callInvite {
            kind = .call
            if let callId = try content?.nonEmptyString("call_id") { id = StableID.of(callId) }
        } else {
            kind = try Self.highlighted(notification) ? .mention : .message
        }
        return Event.Notify(
            chat: room, kind: kind, id: id,
            date: context.receivedAt, silent: try notification.string("prio") == "low", partial: !full,
            title: try Self.title(notification), body: try content?.string("body"), sender: try Self.senderName(notification))
    }

    /// Whether a device's `tweaks.highlight` is true: the homeserver matched a mention rule.
    static func highlighted(_ notification: PayloadObject) throws(IngestError) -> Bool {
        guard let devices = notification["devices"] else { return false }
        guard let list = devices.array else {
            throw notification.error("devices", "expected an array, got \(devices.typeName)")
        }
        for (offset, device) in list.enumerated() {
            guard let members = device.object else { continue }
            let fields = PayloadObject(members, path: "\(notification.field("devices"))[\(offset)]", format: notification.format)
            if try fields.object("tweaks")?.flag("highlight") == true { return true }
        }
        return false
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
