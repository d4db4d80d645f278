import HeraldEvents
import HeraldProjection

extension ReferenceProjection {
    static func isLive(_ status: NotificationStatus) -> Bool { status == .active || status == .dismissed }

    static func setStatus(_ account: inout Account, _ id: Int64, _ status: NotificationStatus) {
        account.notifications[id]!.notification.status = status
    }

    /// Clears notification `id` when it is active or dismissed.
    static func clear(_ account: inout Account, _ id: Int64?, _ reason: ClearReason) {
        guard let id, let entry = account.notifications[id], isLive(entry.notification.status) else { return }
        setStatus(&account, id, .cleared(reason))
    }

    static func groupType(_ kind: NotificationKind, _ chat: Chat) -> GroupType {
        switch kind {
        case .message: .messages
        case .call: .calls
        case .secretChat: .secretChat
        case .mention, .reaction: chat.disableMentions ? .messages : .mentions
        case .pinned: chat.disablePinned ? .messages : .mentions
        }
    }

    /// The live notification of object `identity`, if any.
    static func liveNotification(_ account: Account, _ identity: Identity) -> Int64? {
        guard let id = account.notificationOf[identity], isLive(account.notifications[id]!.notification.status) else { return nil }
        return id
    }

    /// Clears every live notification of `chat` that `selects` picks.
    static func clearAll(_ account: inout Account, chat: String, _ reason: ClearReason, where selects: (HeraldNotification, GroupType) -> Bool) {
        for (id, entry) in account.notifications where entry.chat == chat && isLive(entry.notification.status) {
            if selects(entry.notification, account.groups[entry.group]!.type) { clear(&account, id, reason) }
        }
    }

    /// Applies everything but `revoke`; returns the notification the event created.
    static func mutate(_ account: inout Account, _ payload: Event.Payload, configuration: Projection.Configuration) -> HeraldNotification? {
        switch payload {
        case .notify(let n):
            account.clock = max(account.clock, n.date)
            let identity = Identity(chat: n.chat, objectClass: n.kind.objectClass, id: n.id)
            // Rule 1.
            if account.named.contains(identity) {
                if let id = account.notificationOf[identity], let entry = account.notifications[id],
                    entry.notification.status == .active, entry.notification.partial, !n.partial
                {
                    var notification = entry.notification
                    notification.title = n.title
                    notification.body = n.body
                    notification.sender = n.sender
                    notification.thread = n.thread
                    notification.date = n.date
                    notification.partial = false
                    account.notifications[id]!.notification = notification
                }
                return nil
            }
            account.named.insert(identity)
            let isMessage = n.kind.objectClass == .msg
            if isMessage {
                // Rule 2.
                let chat = account.chats[n.chat]!
                if n.id <= chat.readMaxId || chat.deleted.contains(n.id) || account.deletedEverywhere.contains(n.id)
                    || n.id <= chat.clearedMark
                {
                    return nil
                }
                // Rule 3.
                clearAll(&account, chat: n.chat, .replaced) { notification, _ in notification.kind == .secretChat }
                // Rule 4.
                account.chats[n.chat]!.unread.insert(n.id)
                if n.kind == .mention { account.chats[n.chat]!.unreadMentions.insert(n.id) }
            }
            // Rule 5.
            if n.unreadOnly { return nil }
            let chat = account.chats[n.chat]!
            let type = groupType(n.kind, chat)
            // Rule 6.
            if type == .messages && chat.isMuted(at: n.date) { return nil }
            // Rule 7.
            if isMessage, let mark = chat.dismissalMarks[type], n.id <= mark { return nil }
            // Rule 8.
            if n.kind == .secretChat
                && account.notifications.values.contains(where: { $0.chat == n.chat && $0.notification.kind == .secretChat })
            {
                return nil
            }
            if n.kind == .pinned {
                clearAll(&account, chat: n.chat, .replaced) { notification, _ in notification.kind == .pinned }
            }
            let groupId: Int64
            if let existing = chat.groups[type] {
                groupId = existing
            } else {
                groupId = account.nextGroupId
                account.nextGroupId += 1
                account.groups[groupId] = Group(id: groupId, type: type, chat: n.chat)
                account.chats[n.chat]!.groups[type] = groupId
            }
            let notification = HeraldNotification(
                id: account.nextNotificationId, kind: n.kind, objectId: n.id, date: n.date, silent: n.silent,
                partial: n.partial, status: .active, title: n.title, body: n.body, sender: n.sender, thread: n.thread)
            account.nextNotificationId += 1
            account.notifications[notification.id] = (notification, groupId, n.chat)
            account.notificationOf[identity] = notification.id
            return notification

        case .edit(let e):
            let identity = Identity(chat: e.chat, objectClass: e.kind.objectClass, id: e.id)
            guard let id = account.notificationOf[identity], account.notifications[id]!.notification.status == .active,
                account.notifications[id]!.notification.partial == e.partial
            else {
                return nil
            }
            if let title = e.title { account.notifications[id]!.notification.title = title }
            if let body = e.body { account.notifications[id]!.notification.body = body }

        case .read(let chat, let maxId):
            account.chats[chat]!.readMaxId = max(account.chats[chat]!.readMaxId, maxId)
            account.chats[chat]!.unread = account.chats[chat]!.unread.filter { $0 > maxId }
            clearAll(&account, chat: chat, .read) { notification, type in
                (type == .messages && notification.objectId <= maxId)
                    || (type == .mentions && notification.kind == .pinned && notification.objectId <= maxId)
                    || notification.kind == .secretChat
            }

        case .readAll(let chat):
            for name in chat.map({ [$0] }) ?? Array(account.chats.keys) {
                account.chats[name]!.unread = []
                account.chats[name]!.unreadMentions = []
                clearAll(&account, chat: name, .read) { notification, _ in
                    notification.kind.objectClass == .msg || notification.kind == .secretChat
                }
            }

        case .readMentions(let chat, let ids):
            for id in ids ?? Array(account.chats[chat]!.unreadMentions) {
                account.chats[chat]!.unreadMentions.remove(id)
                if let notification = liveNotification(account, Identity(chat: chat, objectClass: .msg, id: id)),
                    account.notifications[notification]!.notification.kind == .mention
                {
                    clear(&account, notification, .read)
                }
            }

        case .delete(let ids, let chat):
            let chats = chat.map { [$0] } ?? Array(account.chats.keys)
            for id in ids {
                if chat == nil { account.deletedEverywhere.insert(id) } else { account.chats[chat!]!.deleted.insert(id) }
                for name in chats {
                    account.chats[name]!.unread.remove(id)
                    account.chats[name]!.unreadMentions.remove(id)
                    clear(&account, account.notificationOf[Identity(chat: name, objectClass: .msg, id: id)], .deleted)
                }
            }

        case .clearHistory(let chat, let maxId):
            account.chats[chat]!.unread = account.chats[chat]!.unread.filter { $0 > maxId }
            account.chats[chat]!.unreadMentions = account.chats[chat]!.unreadMentions.filter { $0 > maxId }
            clearAll(&account, chat: chat, .deleted) { notification, _ in
                (notification.kind.objectClass == .msg && notification.objectId <= maxId) || notification.kind == .secretChat
            }
            account.chats[chat]!.clearedMark = max(account.chats[chat]!.clearedMark, maxId)

        case .readReactions(let chat, let ids):
            for id in ids {
                clear(&account, account.notificationOf[Identity(chat: chat, objectClass: .reaction, id: id)], .read)
            }

        case .endCall(let chat, let id):
            clear(&account, account.notificationOf[Identity(chat: chat, objectClass: .call, id: id)], .ended)

        case .dismiss(let id):
            if let entry = account.notifications[id], entry.notification.status == .active {
                setStatus(&account, id, .dismissed)
            }

        case .dismissGroup(let groupId, let maxId):
            for (id, entry) in account.notifications
            where entry.group == groupId && entry.notification.status == .active && id <= (maxId ?? .max) {
                setStatus(&account, id, .dismissed)
            }
            if let group = account.groups[groupId] {
                let objects = account.notifications.values.filter {
                    $0.group == groupId && $0.notification.kind.objectClass == .msg && $0.notification.id <= (maxId ?? .max)
                }.map(\.notification.objectId)
                if let mark = objects.max(), mark > account.chats[group.chat]!.dismissalMarks[group.type] ?? 0 {
                    account.chats[group.chat]!.dismissalMarks[group.type] = mark
                }
            }

        case .options(let countMax, let sizeMax):
            if configuration.groupCountMaxOverride == nil, let countMax { account.groupCountMax = countMax }
            if configuration.groupSizeMaxOverride == nil, let sizeMax { account.groupSizeMax = sizeMax }

        case .chatSettings(let s):
            let old = account.chats[s.chat]!
            if s.disableMentions == true && !old.disableMentions {
                clearAll(&account, chat: s.chat, .settings) { notification, type in
                    type == .mentions && (notification.kind == .mention || notification.kind == .reaction)
                }
            }
            if s.disablePinned == true && !old.disablePinned {
                clearAll(&account, chat: s.chat, .settings) { notification, _ in notification.kind == .pinned }
            }
            if let until = s.mutedUntil { account.chats[s.chat]!.mutedUntil = until }
            if let value = s.disableMentions { account.chats[s.chat]!.disableMentions = value }
            if let value = s.disablePinned { account.chats[s.chat]!.disablePinned = value }
            if account.chats[s.chat]!.isMuted(at: account.clock) {
                clearAll(&account, chat: s.chat, .muted) { _, type in type == .messages }
            }

        case .tick(let now):
            account.clock = max(account.clock, now)

        case .revoke, .note:
            break
        }
        return nil
    }

    // MARK: State JSON

    /// The account's object of the state form, with the same key order as STATE.md.
    func accountJSON(_ name: String) -> String {
        let account = accounts[name]!
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("account"); writer.string(name)
        writer.key("options"); writer.objectStart()
        writer.key("groupCountMax"); writer.int(account.groupCountMax)
        writer.key("groupSizeMax"); writer.int(account.groupSizeMax)
        writer.objectEnd()
        writer.key("clock"); writer.int(account.clock)
        writer.key("nextNotificationId"); writer.int(account.nextNotificationId)
        writer.key("nextGroupId"); writer.int(account.nextGroupId)
        let unread = account.chats.values.map(\.unread.count).reduce(0, +)
        let badge = account.chats.values.filter { !$0.isMuted(at: account.clock) }.map(\.unread.count).reduce(0, +)
        let mentions = account.chats.values.map(\.unreadMentions.count).reduce(0, +)
        writer.key("unread"); writer.objectStart()
        writer.key("unread"); writer.int(unread)
        writer.key("badge"); writer.int(badge)
        writer.key("unreadMentions"); writer.int(mentions)
        writer.objectEnd()
        writer.key("chats"); writer.arrayStart()
        for (chatName, chat) in account.chats.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
            writer.objectStart()
            writer.key("chat"); writer.string(chatName)
            writer.key("unread"); writer.int(chat.unread.count)
            writer.key("unreadMentions"); writer.int(chat.unreadMentions.count)
            writer.key("readMaxId"); writer.int(chat.readMaxId)
            writer.key("muted"); writer.bool(chat.isMuted(at: account.clock))
            writer.key("mutedUntil"); writer.int(chat.mutedUntil)
            writer.key("disableMentions"); writer.bool(chat.disableMentions)
            writer.key("disablePinned"); writer.bool(chat.disablePinned)
            writer.objectEnd()
        }
        writer.arrayEnd()
        writer.key("groups"); writer.arrayStart()
        for shown in Self.view(account) {
            VisibleGroup(
                groupId: shown.group.id, type: shown.group.type, chat: shown.group.chat, totalCount: shown.totalCount,
                notifications: shown.notifications
            ).writeJSON(to: &writer)
        }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }
}
