import HeraldEvents

/// What applying one event produced: the client-visible updates and, when asked, the
/// lifecycle changes behind them.
public struct Outcome: Hashable, Sendable {
    /// The updates of SEMANTICS §9, in order; empty when nothing visible changed.
    public var updates: [Update]
    /// Lifecycle facts for audits; empty unless ``Projection/Configuration/recordsChanges``.
    public var changes: [Change]

    /// Creates an outcome.
    public init(updates: [Update] = [], changes: [Change] = []) {
        self.updates = updates
        self.changes = changes
    }
}

/// One client-visible update (SEMANTICS §9, STATE.md "Updates of one event").
public enum Update: Hashable, Sendable {
    /// TDLib's `updateNotificationGroup`.
    case group(GroupUpdate)
    /// TDLib's `updateNotification`.
    case notification(NotificationUpdate)
}

/// A group's visible set or total changed (TDLib's `updateNotificationGroup`).
public struct GroupUpdate: Hashable, Sendable {
    /// The group's id.
    public var groupId: Int64
    /// The group's type.
    public var type: GroupType
    /// The group's chat.
    public var chat: String
    /// The group's total count after the event (SEMANTICS §7).
    public var totalCount: Int
    /// Whether the client must add the notifications without sound.
    public var isSilent: Bool
    /// Notifications that became visible, ascending id.
    public var added: [HeraldNotification]
    /// Ids of notifications that stopped being visible, ascending.
    public var removedIds: [Int64]

    /// Creates a group update.
    public init(
        groupId: Int64, type: GroupType, chat: String, totalCount: Int, isSilent: Bool,
        added: [HeraldNotification], removedIds: [Int64]
    ) {
        self.groupId = groupId
        self.type = type
        self.chat = chat
        self.totalCount = totalCount
        self.isSilent = isSilent
        self.added = added
        self.removedIds = removedIds
    }
}

/// A visible notification's content changed (TDLib's `updateNotification`).
public struct NotificationUpdate: Hashable, Sendable {
    /// The id of the notification's group.
    public var groupId: Int64
    /// The notification with its new content.
    public var notification: HeraldNotification

    /// Creates a notification update.
    public init(groupId: Int64, notification: HeraldNotification) {
        self.groupId = groupId
        self.notification = notification
    }
}
