import HeraldEvents

/// The whole state of one account: options, counters, chats, groups and the visible view.
///
/// Chats and groups live in arrays and refer to each other by index; a group's index is its
/// id minus one because group ids are assigned 1, 2, 3… and never reused. Only live
/// (active or dismissed) notifications are stored, inside their group.
struct Account: Hashable, Sendable {
    /// The projection's configuration (overrides and whether changes are recorded).
    let configuration: Projection.Configuration
    /// The view options the account's `options` events asked for.
    var requestedGroupCountMax = 10
    var requestedGroupSizeMax = 10
    /// The view options in effect (the overrides win).
    var groupCountMax: Int
    var groupSizeMax: Int
    /// The next notification id.
    var nextNotificationId: Int64 = 1
    /// The account's clock (SEMANTICS 1.2 §2): the latest `notify` date or `tick`, never back.
    var clock: Int64 = 0
    /// Unread messages over all chats.
    var unread = 0
    /// The chats whose ``Chat/mutedUntil`` is not 0, ascending (``badge`` looks at these only).
    var mutedChats: [Int32] = []
    /// Unread mentions over all chats.
    var unreadMentions = 0
    /// Chat name → index in ``chats``.
    var chatIndex = NameTable()
    /// Every chat named since the last `revoke`, in order of first appearance.
    var chats: [Chat] = []
    /// Every group and the texts of their live notifications.
    var groupStore = GroupStore()
    /// Live (active or dismissed) notification id → index of its group.
    var live = NotificationIndex()
    /// Ids deleted by a `delete` without `chat`.
    var deletedEverywhere = IdSet()
    /// The candidate groups (SEMANTICS §8), ascending, with stale keys among them
    /// (``CandidateList``).
    var candidateList = CandidateList()
    /// The visible groups, in visible order.
    var visible: [Int32] = []
    /// The groups touched since the view (``candidates`` and ``visible``) was last brought
    /// up to date, each once (a group's ``NotificationGroup/dirtyIndex`` is its position
    /// here), when a replay without updates left the view stale; ``settleView(_:)`` brings
    /// it up to date once, not after every event. Only the view lags: chats, groups,
    /// notifications and counts are always current. Empty in a settled account.
    var staleGroups: [Int32] = []
    /// Whether a replayed `options` event changed the view options since the view was last
    /// brought up to date.
    var staleOptions = false

    /// Creates an empty account (SEMANTICS §2 defaults).
    init(configuration: Projection.Configuration) {
        self.configuration = configuration
        groupCountMax = configuration.groupCountMaxOverride ?? 10
        groupSizeMax = configuration.groupSizeMaxOverride ?? 10
    }

    /// Whether the view lags behind the groups (see ``staleGroups``).
    @inline(__always)
    var viewIsStale: Bool { !staleGroups.isEmpty || staleOptions }

    /// Every group, by id minus one.
    var groups: [NotificationGroup] {
        @inline(__always) _read { yield groupStore.groups }
        @inline(__always) _modify { yield &groupStore.groups }
    }

    /// The keys of ``candidateList``, stale ones included.
    var candidates: [CandidateKey] {
        @inline(__always) _read { yield candidateList.keys }
        @inline(__always) _modify { yield &candidateList.keys }
    }

    /// Whether `key` is a group's current candidate key (not a stale one).
    @inline(__always)
    func isLive(_ key: CandidateKey) -> Bool { groups[Int(key.group)].candidateDate == key.date }

    /// The texts of the live notifications.
    var texts: TextArena {
        @inline(__always) _read { yield groupStore.texts }
        @inline(__always) _modify { yield &groupStore.texts }
    }

    /// The next group id.
    var nextGroupId: Int64 { Int64(groups.count) + 1 }

    /// Unread messages over chats that are not muted at the clock (SEMANTICS 1.2 §7).
    var badge: Int {
        var muted = 0
        for chat in mutedChats where chats[Int(chat)].isMuted(at: clock) { muted += chats[Int(chat)].unreadCount }
        return unread - muted
    }

    /// Whether chat `chat` is muted at the clock.
    @inline(__always)
    func isMuted(chat: Int) -> Bool { chats[chat].isMuted(at: clock) }

    /// Advances the clock to `time` when it is later (SEMANTICS 1.2 §2).
    @inline(__always)
    mutating func advanceClock(to time: Int64) {
        if time > clock { clock = time }
    }

    /// Whether lifecycle changes are recorded (``Projection/Configuration/recordsChanges``).
    @inline(__always)
    var recording: Bool { configuration.recordsChanges }

    /// The index of chat `name`, adding the chat when it is new.
    @inline(__always)
    mutating func intern(chat name: String) -> Int {
        let (index, isNew) = chatIndex.intern(name)
        if isNew { chats.append(Chat(name: name)) }
        return index
    }

    /// The index of the chat's group of `type`, creating the group when needed.
    mutating func group(_ type: GroupType, chat: Int, _ scratch: inout EventScratch) -> Int {
        if let existing = chats[chat].group(type) { return Int(existing) }
        let index = groups.count
        groups.append(NotificationGroup(id: Int64(index) + 1, type: type, chat: Int32(chat)))
        chats[chat].groupSlots[type.index] = Int32(index)
        if recording { scratch.changes.append(.groupCreated(groupId: Int64(index) + 1, type: type, chat: chats[chat].name)) }
        return index
    }

    /// The `totalCount` of group `group` (SEMANTICS 1.2 §7), read field by field in place:
    /// copying the group would retain its lists.
    func totalCount(of group: Int) -> Int {
        let chat = Int(groups[group].chat)
        switch groups[group].type {
        case .messages:
            return isMuted(chat: chat) ? 0 : chats[chat].unreadCount
        case .mentions:
            var total = chats[chat].unreadMentions
            for i in 0..<groups[group].active.count where groups[group].active[i].kind.countsInMentionsTotal { total += 1 }
            for i in 0..<groups[group].dismissed.count where groups[group].dismissed[i].kind.countsInMentionsTotal { total += 1 }
            return total
        case .calls, .secretChat:
            return groups[group].active.count
        }
    }

    /// Marks the chat's group of `type` touched, when updates are computed: for a change of
    /// the chat's counts, which its total shows (SEMANTICS 1.2 §7), before the change.
    @inline(__always)
    mutating func touchTotal(_ type: GroupType, of chat: Int, _ scratch: inout EventScratch) {
        if scratch.savesShownBefore, let group = chats[chat].group(type) { touch(Int(group), &scratch) }
    }

    /// The public value of active notification `notification`, taking the title and texts
    /// of the one the event created from `scratch`.
    func publicValue(of notification: StoredNotification, _ scratch: EventScratch) -> HeraldNotification {
        if notification.id == scratch.createdId {
            return notification.publicValue(title: scratch.createdTitle, texts: scratch.createdTexts ?? .none)
        }
        return publicValue(of: notification)
    }

    /// The public value of active notification `notification`.
    func publicValue(of notification: StoredNotification) -> HeraldNotification {
        let (title, packed) = texts.contents(notification.textSlot)
        return notification.publicValue(title: title, texts: packed)
    }

    /// Where notification `id` is: its group, whether it is active, and its position.
    func locate(_ id: Int64) -> (group: Int, active: Bool, index: Int)? {
        guard id != 0, let g = live[id] else { return nil }
        let group = Int(g)
        if let i = groups[group].active.index(ofId: id) { return (group, true, i) }
        if let i = groups[group].dismissed.index(ofId: id) { return (group, false, i) }
        return nil
    }

    /// Clears a live notification for good (SEMANTICS §5); does nothing for other ids.
    mutating func clear(_ id: Int64, reason: ClearReason, _ scratch: inout EventScratch) {
        guard let (group, isActive, index) = locate(id) else { return }
        touch(group, &scratch)
        let removed: StoredNotification
        if isActive {
            removed = groups[group].active.remove(at: index)
            groups[group].active.shrinkIfSparse()
        } else {
            removed = groups[group].dismissed.remove(at: index)
            groups[group].dismissed.shrinkIfSparse()
        }
        texts.release(removed.textSlot)
        live[id] = nil
        if isActive { activeLeft(group, date: removed.date) }
        if recording { scratch.changes.append(.cleared(notificationId: id, reason: reason)) }
    }

    /// Keeps ``NotificationGroup/newestDate`` of `group` true after an active notification
    /// dated `date` left its active list (or got another date).
    @inline(__always)
    mutating func activeLeft(_ group: Int, date: Int64) {
        if date >= groups[group].newestDate { groups[group].recomputeNewestDate() }
    }

    /// Clears every live notification of `group` that `shouldClear` selects.
    mutating func clearAll(in group: Int, reason: ClearReason, _ scratch: inout EventScratch, where shouldClear: (StoredNotification) -> Bool) {
        let hit = groups[group].active.contains(where: shouldClear) || groups[group].dismissed.contains(where: shouldClear)
        guard hit else { return }
        touch(group, &scratch)
        clearAll(fromActive: true, of: group, reason: reason, &scratch, where: shouldClear)
        clearAll(fromActive: false, of: group, reason: reason, &scratch, where: shouldClear)
    }

    /// Clears, from one list of `group`, the notifications `shouldClear` selects, keeping the
    /// others in order in place.
    private mutating func clearAll(
        fromActive: Bool, of group: Int, reason: ClearReason, _ scratch: inout EventScratch, where shouldClear: (StoredNotification) -> Bool
    ) {
        let count = fromActive ? groups[group].active.count : groups[group].dismissed.count
        var kept = 0
        var newestLeft = false
        defer { if newestLeft { groups[group].recomputeNewestDate() } }
        for index in 0..<count {
            let notification = fromActive ? groups[group].active[index] : groups[group].dismissed[index]
            if shouldClear(notification) {
                texts.release(notification.textSlot)
                live[notification.id] = nil
                if fromActive && notification.date >= groups[group].newestDate { newestLeft = true }
                if recording { scratch.changes.append(.cleared(notificationId: notification.id, reason: reason)) }
            } else {
                if kept != index {
                    if fromActive { groups[group].active[kept] = notification } else { groups[group].dismissed[kept] = notification }
                }
                kept += 1
            }
        }
        guard kept < count else { return }
        if fromActive {
            groups[group].active.removeLast(count - kept)
            groups[group].active.shrinkIfSparse()
        } else {
            groups[group].dismissed.removeLast(count - kept)
            groups[group].dismissed.shrinkIfSparse()
        }
    }

    /// Message `index` of `chat` stops being unread, keeping every count in step.
    @inline(__always)
    mutating func stopUnread(chat: Int, at index: Int, _ scratch: inout EventScratch) {
        guard chats[chat].unread[index].isUnread else { return }
        touchTotal(.messages, of: chat, &scratch)
        chats[chat].unread[index].isUnread = false
        chats[chat].unreadCount -= 1
        unread -= 1
    }

    /// Message `index` of `chat` stops being an unread mention, keeping every count in step.
    @inline(__always)
    mutating func stopUnreadMention(chat: Int, at index: Int, _ scratch: inout EventScratch) {
        guard chats[chat].unread[index].isUnreadMention else { return }
        touchTotal(.mentions, of: chat, &scratch)
        chats[chat].unread[index].isUnreadMention = false
        chats[chat].unreadMentions -= 1
        unreadMentions -= 1
    }

    /// Whether message `message` of a chat whose messages up to `forgottenBelow` need no
    /// entry (``Chat/forgottenBelow``) can be forgotten: no rule would tell it from an unknown one.
    @inline(__always)
    func isForgettable(_ message: UnreadMessage, below forgottenBelow: Int64) -> Bool {
        message.id <= forgottenBelow && !message.isUnread && !message.isUnreadMention
            && (message.notificationId == 0 || live[message.notificationId] == nil)
    }

    /// Drops the forgettable messages among `range` of `chat`'s list.
    mutating func forgetMessages(chat: Int, in range: Range<Int>) {
        guard !range.isEmpty else { return }
        let below = chats[chat].forgottenBelow
        var kept = range.lowerBound
        for i in range {
            let message = chats[chat].unread[i]
            if isForgettable(message, below: below) { continue }
            if kept != i { chats[chat].unread[kept] = message }
            kept += 1
        }
        if kept < range.upperBound {
            chats[chat].unread.removeSubrange(kept..<range.upperBound)
            chats[chat].unread.shrinkIfSparse()
        }
    }
}
