import HeraldEvents

extension Projection {
    /// The state form of STATE.md: `seq`, then every account (or only account `filter`) in
    /// ascending byte order, keys in the order STATE.md lists them.
    public func stateJSON(accounts filter: String? = nil) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("seq"); writer.int(seq)
        writer.key("accounts")
        writer.arrayStart()
        for name in accounts where filter == nil || filter!.isSameName(as: name) {
            if let state = account(name) { state.writeJSON(to: &writer) }
        }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }

    /// One line of the updates form of STATE.md: the updates one event produced.
    public static func updatesJSON(seq: UInt64, account: String, updates: [Update]) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("seq"); writer.int(seq)
        writer.key("account"); writer.string(account)
        writer.key("updates")
        writer.arrayStart()
        for update in updates { update.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }

    /// The active-notifications view of account `name` (TDLib's `updateActiveNotifications`):
    /// `{"account":…,"groups":[…]}`, groups in visible order as in the state form.
    public func activeNotificationsJSON(account name: String) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("account"); writer.string(name)
        writer.key("groups")
        writer.arrayStart()
        for group in activeNotifications(account: name) { group.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }
}

extension AccountState {
    /// Writes the account object of the state form.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.objectStart()
        writer.key("account"); writer.string(name)
        writer.key("options")
        writer.objectStart()
        writer.key("groupCountMax"); writer.int(groupCountMax)
        writer.key("groupSizeMax"); writer.int(groupSizeMax)
        writer.objectEnd()
        writer.key("clock"); writer.int(clock)
        writer.key("nextNotificationId"); writer.int(nextNotificationId)
        writer.key("nextGroupId"); writer.int(nextGroupId)
        writer.key("unread"); unread.writeJSON(to: &writer)
        writer.key("chats")
        writer.arrayStart()
        for chat in chats { chat.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.key("groups")
        writer.arrayStart()
        for group in groups { group.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.objectEnd()
    }
}

extension VisibleGroup {
    /// Writes the group object of the state form.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.objectStart()
        writer.key("groupId"); writer.int(groupId)
        writer.key("type"); writer.string(type.rawValue)
        writer.key("chat"); writer.string(chat)
        writer.key("totalCount"); writer.int(totalCount)
        writer.key("notifications")
        writer.arrayStart()
        for notification in notifications { notification.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.objectEnd()
    }
}

extension HeraldNotification {
    /// Writes the notification form of STATE.md (without `status`; absent strings omitted).
    public func writeJSON(to writer: inout JSONWriter) {
        writer.objectStart()
        writer.key("id"); writer.int(id)
        writer.key("kind"); writer.string(kind.rawValue)
        writer.key("objectId"); writer.int(objectId)
        writer.key("date"); writer.int(date)
        writer.key("silent"); writer.bool(silent)
        writer.key("partial"); writer.bool(partial)
        writer.optional("title", title)
        writer.optional("body", body)
        writer.optional("sender", sender)
        writer.optional("thread", thread)
        writer.objectEnd()
    }
}

extension Update {
    /// Writes the update object of the updates form.
    public func writeJSON(to writer: inout JSONWriter) {
        switch self {
        case .group(let update):
            writer.objectStart()
            writer.key("type"); writer.string("updateNotificationGroup")
            writer.key("groupId"); writer.int(update.groupId)
            writer.key("groupType"); writer.string(update.type.rawValue)
            writer.key("chat"); writer.string(update.chat)
            writer.key("totalCount"); writer.int(update.totalCount)
            writer.key("isSilent"); writer.bool(update.isSilent)
            writer.key("added")
            writer.arrayStart()
            for notification in update.added { notification.writeJSON(to: &writer) }
            writer.arrayEnd()
            writer.key("removedIds"); writer.ints(update.removedIds)
            writer.objectEnd()
        case .notification(let update):
            writer.objectStart()
            writer.key("type"); writer.string("updateNotification")
            writer.key("groupId"); writer.int(update.groupId)
            writer.key("notification"); update.notification.writeJSON(to: &writer)
            writer.objectEnd()
        }
    }
}

extension UnreadCounts {
    /// Writes `{"unread", "badge", "unreadMentions"}` (STATE.md).
    public func writeJSON(to writer: inout JSONWriter) {
        writer.objectStart()
        writer.key("unread"); writer.int(unread)
        writer.key("badge"); writer.int(badge)
        writer.key("unreadMentions"); writer.int(unreadMentions)
        writer.objectEnd()
    }
}

extension ChatState {
    /// Writes one chat of the state form (STATE.md).
    public func writeJSON(to writer: inout JSONWriter) {
        writer.objectStart()
        writer.key("chat"); writer.string(chat)
        writer.key("unread"); writer.int(unread)
        writer.key("unreadMentions"); writer.int(unreadMentions)
        writer.key("readMaxId"); writer.int(readMaxId)
        writer.key("muted"); writer.bool(muted)
        writer.key("mutedUntil"); writer.int(mutedUntil)
        writer.key("disableMentions"); writer.bool(disableMentions)
        writer.key("disablePinned"); writer.bool(disablePinned)
        writer.objectEnd()
    }
}
