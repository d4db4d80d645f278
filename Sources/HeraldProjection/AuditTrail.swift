import HeraldEvents

/// Explains, event by event, what happened to one object, notification or group of an
/// account: created, shown, hidden (and why), shown again, dismissed, cleared, wiped.
///
/// A pure fold: feed it every event of the account in log order with the outcome of
/// applying it (with ``Projection/Configuration/recordsChanges`` on) and read ``entries``.
/// It keeps its own view of which notifications are visible, built from the updates alone,
/// so it needs nothing else from the projection.
public struct AuditTrail: Sendable {
    /// What to follow.
    public enum Target: Hashable, Sendable {
        /// A chat's objects (all of them when `objectId` is nil).
        case object(chat: String, objectId: Int64?)
        /// One notification id.
        case notification(Int64)
        /// One group id.
        case group(Int64)

        /// In words, as `herald audit` and the console title a trail: "notification 3",
        /// "group 2", "chat user:5", "object #7 of chat user:5".
        public var description: String {
            switch self {
            case .notification(let id): "notification \(id)"
            case .group(let id): "group \(id)"
            case .object(let chat, nil): "chat \(chat)"
            case .object(let chat, let id?): "object #\(id) of chat \(chat)"
            }
        }
    }

    /// One event that touched the target, with what it did.
    public struct Entry: Hashable, Sendable {
        public var seq: UInt64
        public var event: Event
        public var effects: [Effect]
    }

    /// One effect of an event on the target.
    public struct Effect: Hashable, Sendable {
        /// A stable machine name: `created`, `ignored`, `unread`, `shown`, `notShown`,
        /// `hidden`, `shownAgain`, `shownAfterBase`, `upgraded`, `edited`, `contentUpdate`,
        /// `dismissed`, `cleared`, `wiped`, `groupCreated`, `groupTotal`, `noEffect`. `shown`
        /// is a notification's first appearance (as it is created, or later when it was
        /// created out of view, `notShown`); `shownAgain` a return after it was hidden;
        /// `shownAfterBase` the first appearance after the base snapshot of a notification
        /// out of view there, which may or may not have been shown before it (see
        /// ``init(account:target:startingFrom:at:)``). `wiped` is a live notification, active
        /// or dismissed, that a `revoke` dropped with the account's state.
        public var kind: String
        public var notificationId: Int64?
        public var groupId: Int64?
        /// The explanation, in a sentence.
        public var text: String
    }

    public let account: String
    public let target: Target
    /// The entries so far, in log order.
    public internal(set) var entries: [Entry] = []
    /// The target as it stood in the snapshot the trail started from (kind `presentAtBase`):
    /// each of its live notifications, or its group, with where it was. Empty when the
    /// trail starts with the log, or the target held nothing there.
    public internal(set) var atBase: [Effect] = []

    /// A notification's status as the trail last saw it (SEMANTICS §5).
    enum Status: Hashable, Sendable {
        /// In its group and may be shown.
        case active
        /// Dismissed by the user: out of view, but still kept in its group (and the
        /// account's state) until it is cleared or the account revoked.
        case dismissed
        /// Gone for good: the projection no longer holds it.
        case cleared
    }

    var notifications: [Int64: (groupId: Int64, chat: String, objectId: Int64, kind: NotificationKind, status: Status)] = [:]
    var groups: [Int64: (type: GroupType, chat: String)] = [:]
    /// Each chat's `mutedUntil` as the events set it (SEMANTICS 1.2), to quote the mute's end.
    /// Keyed by the name's bytes: two chats are one only when their bytes are equal (§2).
    var mutedUntil: [NameKey: Int64] = [:]
    var visible: [Int64: Set<Int64>] = [:]
    /// Target notifications created out of view and not shown since (`notShown`).
    var neverShown: Set<Int64> = []
    /// Target notifications active but out of view at the snapshot the trail started from,
    /// and not shown since: whether they were shown before it is not in the log.
    var outOfViewAtBase: Set<Int64> = []
    /// The seq of that snapshot; 0 when the trail starts with the log.
    var baseSeq: UInt64 = 0
    var groupCountMax = 10
    var groupSizeMax = 10

    /// Starts a trail for `target` in `account`.
    public init(account: String, target: Target) {
        self.account = account
        self.target = target
    }

    /// Starts a trail for `target` in `account` whose first event follows `projection`, the
    /// state after event `seq` (a replay that begins at a snapshot, because compaction
    /// dropped the history before it without an archive).
    ///
    /// The trail learns the account's groups, live (active and dismissed) notifications,
    /// visible notifications and view options as they stand in `projection`, so that what
    /// later events do to them is explained: started empty, it would miss every effect on a
    /// notification or group that existed at the snapshot (a read clearing them would be
    /// "no effect"), take a group brought back for one newly shown, and quote the default
    /// `groupCountMax` and `groupSizeMax` rather than the account's. A notification active
    /// but out of view in `projection` that comes into view later is `shownAfterBase`,
    /// quoting `seq`: the log cannot tell whether it was shown before.
    public init(account: String, target: Target, startingFrom projection: Projection, at seq: UInt64) {
        self.init(account: account, target: target)
        baseSeq = seq
        guard var state = projection.accountsByName[account] else { return }
        var scratch = EventScratch()
        state.settleView(&scratch)
        groupCountMax = state.groupCountMax
        groupSizeMax = state.groupSizeMax
        for chat in state.chats where chat.mutedUntil != 0 { mutedUntil[NameKey(chat.name)] = chat.mutedUntil }
        for group in state.groups {
            let chat = state.chats[Int(group.chat)].name
            groups[group.id] = (group.type, chat)
            for notification in group.active { notifications[notification.id] = (group.id, chat, notification.objectId, notification.kind, .active) }
            for notification in group.dismissed { notifications[notification.id] = (group.id, chat, notification.objectId, notification.kind, .dismissed) }
        }
        for group in projection.activeNotifications(account: account) {
            visible[group.groupId] = Set(group.notifications.map(\.id))
        }
        for (id, notification) in notifications where notification.status == .active && isTarget(notification: id) {
            if visible[notification.groupId]?.contains(id) != true { outOfViewAtBase.insert(id) }
        }
        for (id, group) in groups.sorted(by: { $0.key < $1.key }) where isTarget(group: id) {
            let live = notifications.values.filter { $0.groupId == id }.count
            let view = visible[id].map { "in view with \($0.count) shown" } ?? "out of view"
            atBase.append(Effect(
                kind: "presentAtBase", groupId: id,
                text: "present at the base (seq \(seq)) as group \(id) (\(group.type.rawValue) of chat \(group.chat)), \(live) live notification\(live == 1 ? "" : "s"), \(view)"))
        }
        for (id, notification) in notifications.sorted(by: { $0.key < $1.key }) where isTarget(notification: id) {
            let where_ = switch notification.status {
            case .dismissed: "dismissed"
            case .active: visible[notification.groupId]?.contains(id) == true ? "shown" : "active but out of view"
            case .cleared: "cleared"
            }
            atBase.append(Effect(
                kind: "presentAtBase", notificationId: id, groupId: notification.groupId,
                text: "present at the base (seq \(seq)) as notification \(id) (\(notification.kind.rawValue) #\(notification.objectId) of chat \(notification.chat)) in group \(notification.groupId), \(where_)"))
        }
    }

    func isTarget(notification id: Int64) -> Bool {
        guard let info = notifications[id] else {
            if case .notification(let wanted) = target { return wanted == id }
            return false
        }
        switch target {
        case .notification(let wanted): return wanted == id
        case .group(let wanted): return wanted == info.groupId
        case .object(let chat, let objectId): return chat.isSameName(as: info.chat) && (objectId == nil || objectId == info.objectId)
        }
    }

    func isTarget(group id: Int64) -> Bool {
        switch target {
        case .group(let wanted): return wanted == id
        case .object(let chat, nil): return groups[id]?.chat.isSameName(as: chat) == true
        case .object, .notification: return false
        }
    }

    func isTarget(chat: String, objectId: Int64) -> Bool {
        if case .object(let wantedChat, let wantedObject) = target {
            return wantedChat.isSameName(as: chat) && (wantedObject == nil || wantedObject == objectId)
        }
        return false
    }

    /// Whether the event names the target's chat and object without necessarily changing
    /// anything (a read above the object, a delete of it): worth listing as "no effect".
    func names(_ event: Event) -> Bool {
        guard case .object(let chat, let objectId) = target else { return false }
        switch event.payload {
        case .notify(let n): return n.chat.isSameName(as: chat) && (objectId == nil || n.id == objectId)
        case .edit(let e): return e.chat.isSameName(as: chat) && (objectId == nil || e.id == objectId)
        case .read(let c, let maxId), .clearHistory(let c, let maxId):
            return c.isSameName(as: chat) && (objectId == nil || objectId! <= maxId)
        case .readAll(let c): return c == nil || c!.isSameName(as: chat)
        case .readMentions(let c, let ids): return c.isSameName(as: chat) && (objectId == nil || ids == nil || ids!.contains(objectId!))
        case .delete(let ids, let c):
            let inChat = c?.isSameName(as: chat) == true
            return (c == nil || inChat) && (objectId == nil ? inChat : ids.contains(objectId!))
        case .readReactions(let c, let ids): return c.isSameName(as: chat) && (objectId == nil || ids.contains(objectId!))
        case .endCall(let c, let id): return c.isSameName(as: chat) && (objectId == nil || id == objectId)
        case .chatSettings(let s): return s.chat.isSameName(as: chat)
        case .dismiss, .dismissGroup, .options, .tick, .revoke, .note: return false
        }
    }
}
