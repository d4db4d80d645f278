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

    /// Applies everything but `revoke`; returns the notification the event created.
    static func mutate(_ account: inout Account, _ payload: Event.Payload, configuration: Projection.Configuration) -> HeraldNotification? {
        switch payload {
        case .notify(let n):
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
            if n.kind.objectClass == .msg {
                // Rule 2.
                let chat = account.chats[n.chat]!
                if n.id <= chat.readMaxId || chat.deleted.contains(n.id) || account.deletedEverywhere.contains(n.id) {
                    return nil
                }
                // Rule 3.
                account.chats[n.chat]!.unread[n.id] = n.kind == .mention
            }
            let chat = account.chats[n.chat]!
            let type = groupType(n.kind, chat)
            // Rule 4.
            if type == .messages && chat.muted { return nil }
            // Rule 5.
            if n.kind == .secretChat
                && account.notifications.values.contains(where: { $0.chat == n.chat && $0.notification.kind == .secretChat })
            {
                return nil
            }
            if n.kind == .pinned {
                for (id, entry) in account.notifications
                where entry.chat == n.chat && entry.notification.kind == .pinned
                    && (entry.notification.status == .active || entry.notification.status == .dismissed)
                {
                    setStatus(&account, id, .cleared(.replaced))
                }
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
            guard let id = account.notificationOf[identity], account.notifications[id]!.notification.status == .active else {
                return nil
            }
            if let title = e.title { account.notifications[id]!.notification.title = title }
            if let body = e.body { account.notifications[id]!.notification.body = body }
            account.notifications[id]!.notification.partial = e.partial

        case .read(let chat, let maxId):
            account.chats[chat]!.readMaxId = max(account.chats[chat]!.readMaxId, maxId)
            for id in account.chats[chat]!.unread.keys where id <= maxId { account.chats[chat]!.unread[id] = nil }
            for (id, entry) in account.notifications
            where entry.chat == chat && entry.notification.kind.objectClass == .msg && entry.notification.objectId <= maxId {
                clear(&account, id, .read)
            }

        case .delete(let ids, let chat):
            let chats = chat.map { [$0] } ?? Array(account.chats.keys)
            for id in ids {
                if chat == nil { account.deletedEverywhere.insert(id) } else { account.chats[chat!]!.deleted.insert(id) }
                for name in chats {
                    account.chats[name]!.unread[id] = nil
                    clear(&account, account.notificationOf[Identity(chat: name, objectClass: .msg, id: id)], .deleted)
                }
            }

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

        case .options(let countMax, let sizeMax):
            if configuration.groupCountMaxOverride == nil, let countMax { account.groupCountMax = countMax }
            if configuration.groupSizeMaxOverride == nil, let sizeMax { account.groupSizeMax = sizeMax }

        case .chatSettings(let s):
            let old = account.chats[s.chat]!
            if let muted = s.muted { account.chats[s.chat]!.muted = muted }
            if let value = s.disableMentions { account.chats[s.chat]!.disableMentions = value }
            if let value = s.disablePinned { account.chats[s.chat]!.disablePinned = value }
            if s.muted == true && !old.muted, let group = old.groups[.messages] {
                for (id, entry) in account.notifications where entry.group == group { clear(&account, id, .muted) }
            }
            if s.disableMentions == true && !old.disableMentions, let group = old.groups[.mentions] {
                for (id, entry) in account.notifications
                where entry.group == group && (entry.notification.kind == .mention || entry.notification.kind == .reaction) {
                    clear(&account, id, .settings)
                }
            }
            if s.disablePinned == true && !old.disablePinned {
                // "The chat's pinned notification": its latest one.
                let latest = account.notifications.values.filter { $0.chat == s.chat && $0.notification.kind == .pinned }
                    .max { $0.notification.id < $1.notification.id }
                clear(&account, latest?.notification.id, .settings)
            }

        case .revoke, .note, .readAll, .readMentions, .clearHistory, .tick:
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
        writer.key("nextNotificationId"); writer.int(account.nextNotificationId)
        writer.key("nextGroupId"); writer.int(account.nextGroupId)
        let unread = account.chats.values.map(\.unread.count).reduce(0, +)
        let badge = account.chats.values.filter { !$0.muted }.map(\.unread.count).reduce(0, +)
        let mentions = account.chats.values.map { $0.unread.values.filter { $0 }.count }.reduce(0, +)
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
            writer.key("unreadMentions"); writer.int(chat.unread.values.filter { $0 }.count)
            writer.key("readMaxId"); writer.int(chat.readMaxId)
            writer.key("muted"); writer.bool(chat.muted)
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
