import HeraldEvents

// Readable `print` output for the public values: a one-line summary as `description`, the
// exact JSON form of STATE.md as `debugDescription` (what `debugPrint` and the debugger show).

extension HeraldNotification: CustomStringConvertible, CustomDebugStringConvertible {
    /// `notification 3: message #36, active, "Alice: see you at 5"`.
    public var description: String {
        var text = "notification \(id): \(kind.rawValue) #\(objectId), \(status)"
        if partial { text += ", partial" }
        if silent { text += ", silent" }
        let content = [title, body].compactMap { $0 }.joined(separator: ": ")
        if !content.isEmpty { text += ", \"\(content)\"" }
        return text
    }

    /// The notification object of STATE.md.
    public var debugDescription: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.string
    }
}

extension VisibleGroup: CustomStringConvertible, CustomDebugStringConvertible {
    /// `group 2 (messages of chat:5), total 4, shows 3, 4`.
    public var description: String {
        "group \(groupId) (\(type.rawValue) of \(chat)), total \(totalCount), shows "
            + (notifications.isEmpty ? "nothing" : notifications.map { "\($0.id)" }.joined(separator: ", "))
    }

    /// The group object of STATE.md's active-notifications view.
    public var debugDescription: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.string
    }
}

extension Update: CustomStringConvertible, CustomDebugStringConvertible {
    /// `updateNotificationGroup 2 (messages of chat:5): +7, -3, total 4` or
    /// `updateNotification 7 in group 2`.
    public var description: String {
        switch self {
        case .group(let update):
            var parts: [String] = []
            if !update.added.isEmpty { parts.append(update.added.map { "+\($0.id)" }.joined(separator: " ")) }
            if !update.removedIds.isEmpty { parts.append(update.removedIds.map { "-\($0)" }.joined(separator: " ")) }
            parts.append("total \(update.totalCount)")
            if update.isSilent { parts.append("silent") }
            return "updateNotificationGroup \(update.groupId) (\(update.type.rawValue) of \(update.chat)): " + parts.joined(separator: ", ")
        case .notification(let update):
            return "updateNotification \(update.notification.id) in group \(update.groupId)"
        }
    }

    /// The update object of STATE.md.
    public var debugDescription: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.string
    }
}

extension AccountState: CustomStringConvertible, CustomDebugStringConvertible {
    /// `account tg:1: unread 3, badge 2, mentions 1; 2 chats; visible: group 2 (…), …`.
    public var description: String {
        "account \(name): unread \(unread.unread), badge \(unread.badge), mentions \(unread.unreadMentions); "
            + "\(chats.count) chat\(chats.count == 1 ? "" : "s"); visible: "
            + (groups.isEmpty ? "nothing" : groups.map(\.description).joined(separator: "; "))
    }

    /// The account object of STATE.md's state form.
    public var debugDescription: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.string
    }
}

extension NotificationStatus: CustomStringConvertible {
    /// `active`, `dismissed`, or `cleared (read)`.
    public var description: String {
        switch self {
        case .active: "active"
        case .dismissed: "dismissed"
        case .cleared(let reason): "cleared (\(reason.rawValue))"
        }
    }
}
