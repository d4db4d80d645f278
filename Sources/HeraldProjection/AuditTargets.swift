import HeraldEvents

/// Which audit targets (``AuditTrail/Target``) each event changed: the fold the store's audit
/// index is built from.
///
/// An ``AuditTrail`` lists, for its target, the events that changed it (and, with every
/// event named, those that named it without changing it). Every change it lists comes from
/// the event's ``Outcome``: a lifecycle ``Change`` of one of the target's notifications,
/// groups or objects, or an ``Update`` that shows, hides or recounts them. This fold reads
/// the same outcomes and names every target they touch, so that the seqs it reports for a
/// target include every seq whose trail entry changes it. Feed it every event of the history
/// in log order, with the outcome of applying it with
/// ``Projection/Configuration/recordsChanges`` on.
///
/// A notification touched also touches its group, its object and its chat (a trail that
/// follows a group, an object or a whole chat follows the notification), and a group
/// touches its chat.
public struct AuditTargets: Sendable {
    /// One target, as the index names it.
    /// Chats are `NameKey`s: two chats are one target only when their bytes are equal.
    public enum Key: Hashable, Sendable {
        /// One object of a chat (`herald audit --chat C --object ID`), whatever its class.
        case object(chat: NameKey, objectId: Int64)
        /// A whole chat (`herald audit --chat C`).
        case chat(NameKey)
        /// One notification id.
        case notification(Int64)
        /// One group id.
        case group(Int64)
    }

    /// Per account: each live (active or dismissed) notification's group and object.
    var live: [NameKey: [Int64: (groupId: Int64, objectId: Int64)]] = [:]
    /// Per account: each group's chat.
    var groupChats: [NameKey: [Int64: NameKey]] = [:]
    /// Per account: its mentions groups, and per chat the live mention notifications in
    /// them, which a history `read` keeps and the trail says so (SEMANTICS 1.2 §6).
    var mentionsGroups: [NameKey: Set<Int64>] = [:]
    var keptMentions: [NameKey: [NameKey: Set<Int64>]] = [:]

    /// Starts from `projection`, the state the next event applies to (empty for a history
    /// read from seq 1).
    public init(startingFrom projection: Projection = Projection()) {
        for (name, account) in zip(projection.accountsByName.keys, projection.accountsByName.values) {
            var notifications: [Int64: (groupId: Int64, objectId: Int64)] = [:]
            var chats: [Int64: NameKey] = [:]
            var mentions: [NameKey: Set<Int64>] = [:]
            for group in account.groups {
                let chat = NameKey(account.chats[Int(group.chat)].name)
                chats[group.id] = chat
                if group.type == .mentions { mentionsGroups[NameKey(name), default: []].insert(group.id) }
                for notification in group.active + group.dismissed {
                    notifications[notification.id] = (group.id, notification.objectId)
                    if group.type == .mentions && notification.kind == .mention { mentions[chat, default: []].insert(notification.id) }
                }
            }
            live[NameKey(name)] = notifications
            groupChats[NameKey(name)] = chats
            keptMentions[NameKey(name)] = mentions
        }
    }

    /// The targets of `event`'s account that its `outcome` changed, added to `keys`.
    public mutating func record(_ event: Event, outcome: Outcome, into keys: inout Set<Key>) {
        let account = NameKey(event.account)
        // Taken out and put back, so that they are mutated in place, not copied per event.
        var notifications = live.removeValue(forKey: account) ?? [:]
        var chats = groupChats.removeValue(forKey: account) ?? [:]
        defer {
            live[account] = notifications
            groupChats[account] = chats
        }
        func touchGroup(_ id: Int64) {
            keys.insert(.group(id))
            if let chat = chats[id] { keys.insert(.chat(chat)) }
        }
        func touchNotification(_ id: Int64) {
            keys.insert(.notification(id))
            guard let (groupId, objectId) = notifications[id] else { return }
            touchGroup(groupId)
            if let chat = chats[groupId] { keys.insert(.object(chat: chat, objectId: objectId)) }
        }
        var reset = false
        var cleared: [Int64] = []
        if case .read(let chat, let maxId) = event.payload, let kept = keptMentions[account]?[NameKey(chat)] {
            for id in kept where notifications[id].map({ $0.objectId <= maxId }) == true { touchNotification(id) }
        }
        for change in outcome.changes {
            switch change {
            case .groupCreated(let groupId, let type, let chat):
                chats[groupId] = NameKey(chat)
                if type == .mentions { mentionsGroups[account, default: []].insert(groupId) }
                touchGroup(groupId)
            case .created(let id, let groupId, let chat, let kind, let objectId):
                chats[groupId] = NameKey(chat)
                notifications[id] = (groupId, objectId)
                if kind == .mention && mentionsGroups[account]?.contains(groupId) == true {
                    keptMentions[account, default: [:]][NameKey(chat), default: []].insert(id)
                }
                touchNotification(id)
            case .becameUnread(let chat, let objectId), .ignored(let chat, _, let objectId, _):
                keys.insert(.object(chat: NameKey(chat), objectId: objectId))
                keys.insert(.chat(NameKey(chat)))
            case .upgraded(let id), .edited(let id), .dismissed(let id):
                touchNotification(id)
            case .cleared(let id, _):
                touchNotification(id)
                cleared.append(id)
            case .accountReset:
                for id in notifications.keys { touchNotification(id) }
                for id in chats.keys { touchGroup(id) }
                reset = true
            }
        }
        for update in outcome.updates {
            switch update {
            case .group(let update):
                if chats[update.groupId] == nil { chats[update.groupId] = NameKey(update.chat) }
                touchGroup(update.groupId)
                for id in update.removedIds { touchNotification(id) }
                for notification in update.added { touchNotification(notification.id) }
            case .notification(let update):
                touchNotification(update.notification.id)
            }
        }
        // Forgotten only after the updates, which still name what a revoke or a clear removed.
        for id in cleared {
            if let (groupId, _) = notifications[id], let chat = chats[groupId] { keptMentions[account]?[chat]?.remove(id) }
            notifications[id] = nil
        }
        if reset {
            notifications.removeAll()
            chats.removeAll()
            mentionsGroups[account] = nil
            keptMentions[account] = nil
        }
    }
}

extension AuditTargets.Key {
    /// The key of what `target` follows: a whole chat when it names no object.
    public init(_ target: AuditTrail.Target) {
        switch target {
        case .object(let chat, let objectId?): self = .object(chat: NameKey(chat), objectId: objectId)
        case .object(let chat, nil): self = .chat(NameKey(chat))
        case .notification(let id): self = .notification(id)
        case .group(let id): self = .group(id)
        }
    }
}
