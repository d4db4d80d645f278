import HeraldEvents

extension Account {
    /// `read` (SEMANTICS §6): messages up to `maxId` stop being unread; their notifications clear.
    mutating func read(chat: Int, maxId: Int64) {
        guard maxId > chats[chat].readMaxId else { return }
        chats[chat].readMaxId = maxId
        let end = maxId == .max ? chats[chat].unread.count : chats[chat].unreadLowerBound(maxId + 1)
        if end > 0 {
            // Without updates or changes to report, the notifications are cleared group by
            // group in one pass (see `clearRead`); otherwise one by one, in message order,
            // which is the order updates and the audit trail report.
            let inBulk = end > 1 && !savesShownBefore && !recording
            if inBulk { clearRead(chat: chat, upTo: end) }
            var mentions = 0
            for i in 0..<end {
                let message = chats[chat].unread[i]
                if message.isMention { mentions += 1 }
                if !inBulk && message.notificationId != 0 { clear(message.notificationId, reason: .read) }
            }
            chats[chat].unread.removeFirst(end)
            chats[chat].unread.shrinkIfSparse()
            chats[chat].unreadMentions -= mentions
            unread -= end
            unreadMentions -= mentions
            if !chats[chat].muted { badge -= end }
        }
        if !chats[chat].deleted.isEmpty {
            chats[chat].deleted.removeAll { $0 <= maxId }
        }
    }

    /// Clears the live notifications of unread messages `0..<end` of `chat`, as calling
    /// ``clear(_:reason:)`` on each in message order would when no updates are computed and
    /// no changes recorded: the same notifications leave and the same groups are touched.
    /// (The order of the touches differs, which only updates would show: without them, a
    /// touched group only gets its candidate key refreshed, in a sorted set.)
    ///
    /// A message's notification lives in its chat's `messages` or `mentions` group (the only
    /// groups of message notifications, SEMANTICS §3): each of the two is filtered in place
    /// against the sorted ids (``clearAll(in:reason:where:)``, one pass to see whether any is
    /// there and one to remove them), instead of finding (one hash lookup and one binary
    /// search) and removing (a shift) each notification on its own.
    private mutating func clearRead(chat: Int, upTo end: Int) {
        withUnsafeTemporaryAllocation(of: Int64.self, capacity: end) { buffer in
            var count = 0
            for i in 0..<end {
                let id = chats[chat].unread[i].notificationId
                if id != 0 {
                    buffer.initializeElement(at: count, to: id)
                    count += 1
                }
            }
            guard count > 0 else { return }
            var ids = UnsafeMutableBufferPointer(rebasing: buffer[..<count])
            // Notification ids mostly grow with message ids: usually sorted already, which
            // the standard sort finds in one pass.
            ids.sort()
            let sorted = UnsafeBufferPointer(ids)
            let isRead = { (notification: StoredNotification) in Self.contains(sorted, notification.id) }
            for type in [GroupType.messages, .mentions] {
                if let group = chats[chat].group(type) { clearAll(in: Int(group), reason: .read, where: isRead) }
            }
        }
    }

    /// Whether the sorted `ids` hold `id` (a binary search).
    private static func contains(_ ids: UnsafeBufferPointer<Int64>, _ id: Int64) -> Bool {
        var low = 0
        var high = ids.count
        while low < high {
            let mid = (low + high) >> 1
            if ids[mid] < id { low = mid + 1 } else { high = mid }
        }
        return low < ids.count && ids[low] == id
    }

    /// `delete` with `chat` (SEMANTICS §6).
    mutating func delete(_ ids: [Int64], chat: Int) {
        for id in ids where id > chats[chat].readMaxId {
            chats[chat].deleted.insert(id)
            deleteMessage(id, chat: chat)
        }
    }

    /// `delete` without `chat`: the ids match in every chat, now and later (SEMANTICS §6).
    mutating func deleteEverywhere(_ ids: [Int64]) {
        for id in ids {
            deletedEverywhere.insert(id)
            // Most chats' unread ranges do not reach `id`: skip them without a search.
            for chat in chats.indices {
                guard let first = chats[chat].unread.first, first.id <= id, chats[chat].unread.last!.id >= id else { continue }
                deleteMessage(id, chat: chat)
            }
        }
    }

    /// Message `id` of `chat` stops being unread and its notification clears.
    mutating func deleteMessage(_ id: Int64, chat: Int) {
        guard let index = chats[chat].unreadIndex(of: id) else { return }
        let notificationId = chats[chat].unread[index].notificationId
        forgetUnread(chat: chat, at: index)
        clear(notificationId, reason: .deleted)
    }

    /// `readReactions` (SEMANTICS §6).
    mutating func readReactions(_ ids: [Int64], chat: Int) {
        for id in ids {
            if let notificationId = chats[chat].objects[ObjectKey(objectClass: .reaction, id: id)] {
                clear(notificationId, reason: .read)
            }
        }
    }

    /// `endCall` (SEMANTICS §6).
    mutating func endCall(_ id: Int64, chat: Int) {
        if let notificationId = chats[chat].objects[ObjectKey(objectClass: .call, id: id)] {
            clear(notificationId, reason: .ended)
        }
    }

    /// `dismiss` (SEMANTICS §6): an active notification becomes dismissed.
    mutating func dismiss(_ id: Int64) {
        guard let (group, isActive, index) = locate(id), isActive else { return }
        touch(group)
        let notification = groups[group].active.remove(at: index)
        groups[group].active.shrinkIfSparse()
        groups[group].dismissed.insertSorted(notification)
        if recording { changes.append(.dismissed(notificationId: id)) }
    }

    /// `dismissGroup` (SEMANTICS §6): active notifications up to `maxId` become dismissed.
    mutating func dismissGroup(_ groupId: Int64, upTo maxId: Int64) {
        guard groupId >= 1, groupId <= Int64(groups.count) else { return }
        let group = Int(groupId - 1)
        let end = groups[group].active.lowerBound(id: maxId == .max ? .max : maxId + 1)
        let count = maxId == .max ? groups[group].active.count : end
        guard count > 0 else { return }
        touch(group)
        let moved = Array(groups[group].active[0..<count])
        groups[group].active.removeFirst(count)
        groups[group].active.shrinkIfSparse()
        if recording {
            for notification in moved { changes.append(.dismissed(notificationId: notification.id)) }
        }
        // Both lists are ascending; merge them.
        var merged: [StoredNotification] = []
        merged.reserveCapacity(moved.count + groups[group].dismissed.count)
        var a = 0
        var b = 0
        let old = groups[group].dismissed
        while a < moved.count || b < old.count {
            if b == old.count || (a < moved.count && moved[a].id < old[b].id) {
                merged.append(moved[a]); a += 1
            } else {
                merged.append(old[b]); b += 1
            }
        }
        groups[group].dismissed = merged
    }

    /// `options` (SEMANTICS §8); the configuration's overrides win.
    mutating func setOptions(groupCountMax countMax: Int?, groupSizeMax sizeMax: Int?) {
        if let countMax { requestedGroupCountMax = countMax }
        if let sizeMax { requestedGroupSizeMax = sizeMax }
        let newCount = configuration.groupCountMaxOverride ?? requestedGroupCountMax
        let newSize = configuration.groupSizeMaxOverride ?? requestedGroupSizeMax
        if newCount != groupCountMax || newSize != groupSizeMax {
            groupCountMax = newCount
            groupSizeMax = newSize
            optionsChanged = true
        }
    }

    /// `chatSettings` (SEMANTICS §6): turning a setting on clears what it covers.
    mutating func apply(_ settings: Event.ChatSettings, chat: Int) {
        if let muted = settings.muted, muted != chats[chat].muted {
            chats[chat].muted = muted
            let count = chats[chat].unread.count
            badge += muted ? -count : count
            if muted, let group = chats[chat].group(.messages) {
                clearAll(in: Int(group), reason: .muted) { _ in true }
            }
        }
        if let disable = settings.disableMentions, disable != chats[chat].disableMentions {
            chats[chat].disableMentions = disable
            if disable, let group = chats[chat].group(.mentions) {
                clearAll(in: Int(group), reason: .settings) { $0.kind == .mention || $0.kind == .reaction }
            }
        }
        if let disable = settings.disablePinned, disable != chats[chat].disablePinned {
            chats[chat].disablePinned = disable
            if disable { clear(chats[chat].pinnedNotificationId, reason: .settings) }
        }
    }

    /// `revoke` (SEMANTICS §6): removes every visible group and wipes the account.
    mutating func revoke(computeUpdates: Bool = true) -> [Update] {
        var updates: [Update] = []
        for group in computeUpdates ? visible.sorted() : [] {
            let g = groups[Int(group)]
            updates.append(
                .group(
                    GroupUpdate(
                        groupId: g.id, type: g.type, chat: chats[Int(g.chat)].name, totalCount: 0,
                        isSilent: true, added: [], removedIds: g.active.suffix(groupSizeMax).map(\.id))))
        }
        let recordsChanges = configuration.recordsChanges
        self = Account(configuration: configuration)
        if recordsChanges { changes.append(.accountReset) }
        return updates
    }
}

