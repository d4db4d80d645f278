import HeraldEvents

/// Events that act on an earlier event of the room: redactions and edits.
extension MatrixAdapter {
    /// The `rel_type` of an edit (Matrix spec, "Event replacements").
    static let replaceRelation = "m.replace"
    /// The event type that starts a call (Matrix spec, "Voice over IP").
    static let callInvite = "m.call.invite"
    /// The event types after which a call no longer rings: hung up, rejected, or answered.
    static let callEnds: Set<String> = ["m.call.hangup", "m.call.reject", "m.call.answer"]

    /// The `endCall` of a hang-up, rejection or answer: the call its `content.call_id` names,
    /// whose invite's `notify` has id ``StableID`` of that call id; `nil` for other events.
    func callEnd(_ notification: PayloadObject, room: String) throws(IngestError) -> Event.Payload? {
        guard let type = try notification.string("type"), Self.callEnds.contains(type) else { return nil }
        guard let content = try notification.object("content") else {
            throw notification.error("content", "missing: \(type) names its call by content.call_id")
        }
        return .endCall(chat: room, id: StableID.of(try content.requiredString("call_id")))
    }

    /// The event a redaction or an edit acts on, as a `delete` or an `edit` of the object that
    /// event's `notify` created (chat = `room`, id = ``StableID`` of its event id); `nil` for
    /// any other event. The edit is not `partial`, as the pushed notify it edits is not.
    func relation(_ notification: PayloadObject, room: String) throws(IngestError) -> Event.Payload? {
        let content = try notification.object("content")
        if try notification.string("type") == "m.room.redaction" {
            // Room versions 11 and later put `redacts` in `content`; earlier ones at the top.
            guard let redacts = try orElse(content?.nonEmptyString("redacts"), notification.nonEmptyString("redacts")) else {
                throw (content ?? notification).error("redacts", "missing: a redaction names the event it redacts")
            }
            return .delete(ids: [StableID.of(redacts)], chat: room)
        }
        guard let content, let relation = try content.object("m.relates_to"),
            try relation.string("rel_type") == Self.replaceRelation
        else { return nil }
        let original = try relation.requiredString("event_id")
        let body = try orElse(content.object("m.new_content")?.string("body"), content.string("body"))
        // SEMANTICS 1.2 applies an edit only to a notification of the same `partial`. An edit
        // reaches the gateway only in a body with `content`, from a pusher that sends content,
        // which sent the original event with its content too: a notify that is not partial
        // (see ``notify(_:eventId:room:)``). So the edit is not partial either, and reaches it.
        return .edit(Event.Edit(
            chat: room, kind: .message, id: StableID.of(original),
            title: try Self.title(notification), body: body, partial: false))
    }
}
