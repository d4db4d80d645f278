import HeraldEvents

/// What a push tells of the user's own state: an invite for them, and the badge counts.
extension MatrixAdapter {
    /// The membership of an invite (Matrix spec, `m.room.member`).
    static let inviteMembership = "invite"

    /// Whether `notification` invites the receiving user into its room: an `m.room.member`
    /// event whose membership (`content.membership`, or the top-level `membership` Synapse's
    /// HTTP pusher and Sygnal add) is `invite`, and whose target is the user: `user_is_target`
    /// when the body has it, else a `state_key` naming the account's Matrix id, else yes — the
    /// default push rules notify a member event only through `.m.rule.invite_for_me`
    /// (`.m.rule.member_event` is `dont_notify`), so a pushed invite that names no target is
    /// the user's (Sygnal's FCM data carries `membership` but no target).
    func isInviteForUser(_ notification: PayloadObject, account: String) throws(IngestError) -> Bool {
        guard try notification.string("type") == "m.room.member" else { return false }
        let membership = try orElse(notification.object("content")?.string("membership"), notification.string("membership"))
        guard membership == Self.inviteMembership else { return false }
        if let isTarget = try notification.flag("user_is_target") { return isTarget }
        guard let target = try notification.nonEmptyString("state_key") else { return true }
        // The account is the Matrix id, or the id behind a prefix such as `mx:`.
        return account == target || account.hasSuffix(":" + target)
    }

    /// The text of an invite: "Alice invited you to Room" (or "Alice invited you" when the
    /// room has no name), so the notification reads as Element's does instead of an empty
    /// message; the title is the room's name, else the inviter's.
    static func inviteText(_ notification: PayloadObject) throws(IngestError) -> (title: String?, body: String) {
        let inviter = try senderName(notification) ?? "Someone"
        let room = try notification.nonEmptyString("room_name")
        let body = room.map { "\(inviter) invited you to \($0)" } ?? "\(inviter) invited you"
        return (room ?? inviter, body)
    }

    /// The events `counts` stand for. A body without an event whose `counts.unread` is 0 is
    /// the badge push a homeserver sends when the user has read everything (Synapse's
    /// `HttpPusher._send_badge`): a `readAll` of the account. Otherwise the counts (never
    /// negative) are kept as a `note`: an unread count above 0 names no room or event, so
    /// Herald cannot tell which notifications the user read elsewhere.
    func countEvents(_ notification: PayloadObject, account: String, hasEvent: Bool) throws(IngestError) -> [Event] {
        var counts: [(key: String, value: Int64)] = []
        if let countFields = try notification.object("counts") {
            for key in ["unread", "missed_calls"] {
                if let count = try countFields.integer(key) {
                    guard count >= 0 else { throw countFields.error(key, "must be >= 0, got \(count)") }
                    counts.append((key, count))
                }
            }
        }
        var events: [Event] = []
        if !hasEvent, let unread = counts.first(where: { $0.key == "unread" }), unread.value == 0 {
            events.append(Event(account: account, .readAll(chat: nil)))
            counts.removeAll { $0.key == "unread" }
            // A missed-call count beside it still says something Herald cannot apply.
            counts.removeAll { $0.key == "missed_calls" && $0.value == 0 }
        }
        if !counts.isEmpty {
            let reason = "counts: " + counts.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            events.append(Event(account: account, .note(source: "matrix", reason: reason)))
        } else if events.isEmpty && !hasEvent {
            events.append(Event(account: account, .note(source: "matrix", reason: "no event id and no counts")))
        }
        return events
    }
}
