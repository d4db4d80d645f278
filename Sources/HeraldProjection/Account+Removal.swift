import HeraldEvents

extension Account {
    /// `read` (SEMANTICS 1.2 §6): messages up to `maxId` stop being unread (mentions stay
    /// unread mentions); the notifications of the messages group up to `maxId`, the pinned
    /// one up to `maxId` and the secret chat notice clear.
    mutating func read(chat: Int, maxId: Int64, _ scratch: inout EventScratch) {
        if maxId > chats[chat].readMaxId { chats[chat].readMaxId = maxId }
        let end = chats[chat].endOfMessages(upTo: maxId)
        if end > 0 {
            // Without updates or changes to report, the notifications are cleared group by
            // group in one pass (see `clearRead`); otherwise one by one, in message order,
            // which is the order updates and the audit trail report.
            let inBulk = end > 1 && !scratch.savesShownBefore && !recording
            if inBulk { clearRead(chat: chat, upTo: end, &scratch) }
            for i in 0..<end {
                let message = chats[chat].unread[i]
                stopUnread(chat: chat, at: i, &scratch)
                if !inBulk && message.notificationId != 0 && Self.readClears(message) {
                    clear(message.notificationId, reason: .read, &scratch)
                }
            }
            // What the read passed is forgotten but for unread mentions and the notifications
            // it leaves (a mention or reaction in the mentions group), which only those need
            // a lookup to tell.
            var kept = 0
            for i in 0..<end {
                let message = chats[chat].unread[i]
                let keep = message.isUnreadMention
                    || (message.notificationId != 0 && !Self.readClears(message) && live[message.notificationId] != nil)
                guard keep else { continue }
                if kept != i { chats[chat].unread[kept] = message }
                kept += 1
            }
            if kept < end {
                chats[chat].unread.removeSubrange(kept..<end)
                chats[chat].unread.shrinkIfSparse()
            }
        }
        if chats[chat].hasReactionInMessages, let group = chats[chat].group(.messages) {
            clearAll(in: Int(group), reason: .read, &scratch) { $0.kind == .reaction && $0.objectId <= maxId }
        }
        if chats[chat].secretChatNotificationId != 0 { clear(chats[chat].secretChatNotificationId, reason: .read, &scratch) }
        if !chats[chat].deleted.isEmpty {
            let below = chats[chat].forgottenBelow
            chats[chat].deleted.removeAll { $0 <= below }
        }
    }

    /// Whether a `read` past message `message` clears its notification: one in the messages
    /// group, or a pinned one (SEMANTICS 1.2 §6; a mention or reaction in the mentions group stays).
    @inline(__always)
    static func readClears(_ message: UnreadMessage) -> Bool { !message.inMentionsGroup || message.isPinned }

    /// Clears the live notifications of messages `0..<end` of `chat` that a `read` clears,
    /// as calling ``clear(_:reason:)`` on each in message order would when no updates are
    /// computed and no changes recorded: the same notifications leave and the same groups
    /// are touched. (The order of the touches differs, which only updates would show: without
    /// them, a touched group only gets its candidate key refreshed, in a sorted set.)
    ///
    /// A message's notification lives in its chat's `messages` or `mentions` group (the only
    /// groups of message notifications, SEMANTICS §3): each of the two is filtered in place
    /// against the sorted ids (``clearAll(in:reason:where:)``, one pass to see whether any is
    /// there and one to remove them), instead of finding (one hash lookup and one binary
    /// search) and removing (a shift) each notification on its own.
    private mutating func clearRead(chat: Int, upTo end: Int, _ scratch: inout EventScratch) {
        withUnsafeTemporaryAllocation(of: Int64.self, capacity: end) { buffer in
            var count = 0
            for i in 0..<end {
                let message = chats[chat].unread[i]
                if message.notificationId != 0 && Self.readClears(message) {
                    buffer.initializeElement(at: count, to: message.notificationId)
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
                if let group = chats[chat].group(type) { clearAll(in: Int(group), reason: .read, &scratch, where: isRead) }
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

    /// `readAll` for one chat (SEMANTICS 1.2 §6): every message stops being unread and an
    /// unread mention; every message and secret chat notification clears. `readMaxId` stays:
    /// the messages are remembered, so their redeliveries stay duplicates.
    mutating func readAll(chat: Int, _ scratch: inout EventScratch) {
        for i in 0..<chats[chat].unread.count {
            let message = chats[chat].unread[i]
            stopUnread(chat: chat, at: i, &scratch)
            stopUnreadMention(chat: chat, at: i, &scratch)
            if message.notificationId != 0 { clear(message.notificationId, reason: .read, &scratch) }
        }
        if chats[chat].secretChatNotificationId != 0 { clear(chats[chat].secretChatNotificationId, reason: .read, &scratch) }
        forgetMessages(chat: chat, in: 0..<chats[chat].endOfMessages(upTo: chats[chat].forgottenBelow))
    }

    /// `readMentions` (SEMANTICS 1.2 §6): the mentions `ids` (every unread mention when
    /// `nil`) stop being unread mentions, and their mention notifications clear.
    mutating func readMentions(_ ids: [Int64]?, chat: Int, _ scratch: inout EventScratch) {
        if let ids {
            for id in ids {
                guard let index = chats[chat].unreadIndex(of: id) else { continue }
                readMention(chat: chat, at: index, &scratch)
                if isForgettable(chats[chat].unread[index], below: chats[chat].forgottenBelow) {
                    chats[chat].unread.remove(at: index)
                }
            }
        } else {
            guard chats[chat].unreadMentions > 0 else { return }
            for i in 0..<chats[chat].unread.count where chats[chat].unread[i].isUnreadMention { readMention(chat: chat, at: i, &scratch) }
            forgetMessages(chat: chat, in: 0..<chats[chat].endOfMessages(upTo: chats[chat].forgottenBelow))
        }
    }

    /// Message `index` of `chat` stops being an unread mention; its mention notification clears.
    private mutating func readMention(chat: Int, at index: Int, _ scratch: inout EventScratch) {
        let message = chats[chat].unread[index]
        stopUnreadMention(chat: chat, at: index, &scratch)
        if message.isMention && message.notificationId != 0 { clear(message.notificationId, reason: .read, &scratch) }
    }

    /// `delete` with `chat` (SEMANTICS §6).
    mutating func delete(_ ids: [Int64], chat: Int, _ scratch: inout EventScratch) {
        for id in ids {
            if id > chats[chat].forgottenBelow { chats[chat].deleted.insert(id) }
            deleteMessage(id, chat: chat, &scratch)
        }
    }

    /// `delete` without `chat`: the ids match in every chat, now and later (SEMANTICS §6).
    mutating func deleteEverywhere(_ ids: [Int64], _ scratch: inout EventScratch) {
        for id in ids {
            deletedEverywhere.insert(id)
            // Most chats' remembered ranges do not reach `id`: skip them without a search.
            for chat in chats.indices {
                guard let first = chats[chat].unread.first, first.id <= id, chats[chat].unread.last!.id >= id else { continue }
                deleteMessage(id, chat: chat, &scratch)
            }
        }
    }

    /// Message `id` of `chat` stops being unread and an unread mention, and its notification
    /// clears; it is remembered (with its notification id, for the dismissal mark) until a
    /// read or a cleared history passes it.
    mutating func deleteMessage(_ id: Int64, chat: Int, _ scratch: inout EventScratch) {
        guard let index = chats[chat].unreadIndex(of: id) else { return }
        let message = chats[chat].unread[index]
        stopUnread(chat: chat, at: index, &scratch)
        stopUnreadMention(chat: chat, at: index, &scratch)
        clear(message.notificationId, reason: .deleted, &scratch)
        if isForgettable(chats[chat].unread[index], below: chats[chat].forgottenBelow) {
            chats[chat].unread.remove(at: index)
        }
    }

    /// `delete` with `maxId` (SEMANTICS 1.2 §6): the chat's history up to `maxId` was cleared.
    mutating func clearHistory(chat: Int, maxId: Int64, _ scratch: inout EventScratch) {
        let end = chats[chat].endOfMessages(upTo: maxId)
        for i in 0..<end {
            let message = chats[chat].unread[i]
            stopUnread(chat: chat, at: i, &scratch)
            stopUnreadMention(chat: chat, at: i, &scratch)
            if message.notificationId != 0 { clear(message.notificationId, reason: .deleted, &scratch) }
        }
        if chats[chat].secretChatNotificationId != 0 { clear(chats[chat].secretChatNotificationId, reason: .deleted, &scratch) }
        if maxId > chats[chat].clearedMark { chats[chat].clearedMark = maxId }
        if end > 0 {
            chats[chat].unread.removeFirst(end)
            chats[chat].unread.shrinkIfSparse()
        }
        if !chats[chat].deleted.isEmpty {
            let below = chats[chat].forgottenBelow
            chats[chat].deleted.removeAll { $0 <= below }
        }
    }

    /// `readReactions` (SEMANTICS §6).
    mutating func readReactions(_ ids: [Int64], chat: Int, _ scratch: inout EventScratch) {
        for id in ids {
            if let notificationId = chats[chat].objects[ObjectKey(objectClass: .reaction, id: id)] {
                clear(notificationId, reason: .read, &scratch)
            }
        }
    }

    /// `endCall` (SEMANTICS §6).
    mutating func endCall(_ id: Int64, chat: Int, _ scratch: inout EventScratch) {
        if let notificationId = chats[chat].objects[ObjectKey(objectClass: .call, id: id)] {
            clear(notificationId, reason: .ended, &scratch)
        }
    }

    /// `dismiss` (SEMANTICS §6): an active notification becomes dismissed.
    mutating func dismiss(_ id: Int64, _ scratch: inout EventScratch) {
        guard let (group, isActive, index) = locate(id), isActive else { return }
        touch(group, &scratch)
        let notification = groups[group].active.remove(at: index)
        groups[group].active.shrinkIfSparse()
        activeLeft(group, date: notification.date)
        groups[group].dismissed.insertSorted(notification)
        if recording { scratch.changes.append(.dismissed(notificationId: id)) }
    }

    /// `dismissGroup` (SEMANTICS 1.2 §6): active notifications up to `maxId` become
    /// dismissed, and the group's dismissal mark rises to the largest message they (and the
    /// group's other notifications up to `maxId`, whatever their status) were about.
    mutating func dismissGroup(_ groupId: Int64, upTo maxId: Int64, _ scratch: inout EventScratch) {
        guard groupId >= 1, groupId <= Int64(groups.count) else { return }
        let group = Int(groupId - 1)
        raiseDismissalMark(of: group, upTo: maxId)
        let end = groups[group].active.lowerBound(id: maxId == .max ? .max : maxId + 1)
        let count = maxId == .max ? groups[group].active.count : end
        guard count > 0 else { return }
        touch(group, &scratch)
        let moved = Array(groups[group].active[0..<count])
        groups[group].active.removeFirst(count)
        groups[group].active.shrinkIfSparse()
        groups[group].recomputeNewestDate()
        if recording {
            for notification in moved { scratch.changes.append(.dismissed(notificationId: notification.id)) }
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

    /// Raises the dismissal mark of `group` (a messages or mentions group) to the largest
    /// message id among its msg-class notifications up to notification `maxId`. Messages at or
    /// below ``Chat/forgottenBelow`` may be forgotten, with their notification ids; a mark
    /// there changes nothing (§4 rule 2 comes first), so the mark found is as good.
    private mutating func raiseDismissalMark(of group: Int, upTo maxId: Int64) {
        let type = groups[group].type
        guard type == .messages || type == .mentions else { return }
        let chat = Int(groups[group].chat)
        let inMentions = type == .mentions
        var mark = chats[chat].dismissalMark(type)
        for message in chats[chat].unread
        where message.notificationId != 0 && message.notificationId <= maxId && message.inMentionsGroup == inMentions
            && message.id > mark
        {
            mark = message.id
        }
        if inMentions { chats[chat].mentionsDismissalMark = mark } else { chats[chat].messagesDismissalMark = mark }
    }

    /// `options` (SEMANTICS §8); the configuration's overrides win.
    mutating func setOptions(groupCountMax countMax: Int?, groupSizeMax sizeMax: Int?, _ scratch: inout EventScratch) {
        if let countMax { requestedGroupCountMax = countMax }
        if let sizeMax { requestedGroupSizeMax = sizeMax }
        let newCount = configuration.groupCountMaxOverride ?? requestedGroupCountMax
        let newSize = configuration.groupSizeMaxOverride ?? requestedGroupSizeMax
        if newCount != groupCountMax || newSize != groupSizeMax {
            if !scratch.savesShownBefore {
                staleOptions = true
            } else if !scratch.optionsChanged {
                scratch.optionsChanged = true
                scratch.previousGroupSizeMax = groupSizeMax
            }
            groupCountMax = newCount
            groupSizeMax = newSize
        }
    }

    /// `chatSettings` (SEMANTICS 1.2 §6): turning a setting on clears what it covers; then,
    /// if the chat is muted at the clock, its messages group clears.
    mutating func apply(_ settings: Event.ChatSettings, chat: Int, _ scratch: inout EventScratch) {
        if let disable = settings.disableMentions, disable != chats[chat].disableMentions {
            chats[chat].disableMentions = disable
            if disable, let group = chats[chat].group(.mentions) {
                clearAll(in: Int(group), reason: .settings, &scratch) { $0.kind == .mention || $0.kind == .reaction }
            }
        }
        if let disable = settings.disablePinned, disable != chats[chat].disablePinned {
            chats[chat].disablePinned = disable
            if disable { clear(chats[chat].pinnedNotificationId, reason: .settings, &scratch) }
        }
        if let until = settings.mutedUntil, until != chats[chat].mutedUntil {
            touchTotal(.messages, of: chat, &scratch)
            // `mutedChats` lists the chats whose `mutedUntil` is not 0, ascending.
            if until == 0 {
                mutedChats.removeAll { $0 == Int32(chat) }
            } else if chats[chat].mutedUntil == 0 {
                mutedChats.insert(Int32(chat), at: mutedChats.firstIndex { $0 > Int32(chat) } ?? mutedChats.count)
            }
            chats[chat].mutedUntil = until
        }
        if isMuted(chat: chat), let group = chats[chat].group(.messages) {
            clearAll(in: Int(group), reason: .muted, &scratch) { _ in true }
        }
    }

    /// `revoke` (SEMANTICS §6): removes every visible group and wipes the account.
    mutating func revoke(computeUpdates: Bool = true, _ scratch: inout EventScratch) -> [Update] {
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
        if recordsChanges { scratch.changes.append(.accountReset) }
        return updates
    }
}

