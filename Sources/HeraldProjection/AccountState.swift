import HeraldEvents

/// A read-only view of one account (STATE.md "State of the store", one element of `accounts`).
public struct AccountState: Hashable, Sendable {
    /// The account's name.
    public var name: String
    /// The `groupCountMax` in effect (a configuration override wins).
    public var groupCountMax: Int
    /// The `groupSizeMax` in effect (a configuration override wins).
    public var groupSizeMax: Int
    /// The id the next notification will get.
    public var nextNotificationId: Int64
    /// The id the next group will get.
    public var nextGroupId: Int64
    /// The account's clock (SEMANTICS 1.2 §2): the latest `notify` date or `tick`, Unix seconds.
    public var clock: Int64
    /// The account's unread counts (SEMANTICS §7).
    public var unread: UnreadCounts
    /// Every chat named since the last `revoke`, in ascending byte order.
    public var chats: [ChatState]
    /// The visible groups, in visible order (SEMANTICS §8).
    public var groups: [VisibleGroup]

    init(name: String, _ account: Account) {
        self.name = name
        groupCountMax = account.groupCountMax
        groupSizeMax = account.groupSizeMax
        nextNotificationId = account.nextNotificationId
        nextGroupId = account.nextGroupId
        clock = account.clock
        unread = UnreadCounts(unread: account.unread, badge: account.badge, unreadMentions: account.unreadMentions)
        chats = account.chats.sorted { Projection.byteOrder($0.name, $1.name) }.map { ChatState($0, clock: account.clock) }
        groups = account.visibleGroups
    }
}

/// An account's unread counts (SEMANTICS §7).
public struct UnreadCounts: Hashable, Sendable {
    /// Unread messages over all chats.
    public var unread: Int
    /// Unread messages over chats that are not muted.
    public var badge: Int
    /// Unread mentions over all chats.
    public var unreadMentions: Int

    /// Creates unread counts.
    public init(unread: Int, badge: Int, unreadMentions: Int) {
        self.unread = unread
        self.badge = badge
        self.unreadMentions = unreadMentions
    }
}

/// A read-only view of one chat of an account.
public struct ChatState: Hashable, Sendable {
    /// The chat's name.
    public var chat: String
    /// Unread messages (SEMANTICS §7).
    public var unread: Int
    /// Unread mentions.
    public var unreadMentions: Int
    /// The highest `maxId` read; 0 before any `read`.
    public var readMaxId: Int64
    /// Whether the chat is muted at the account's clock.
    public var muted: Bool
    /// The date the chat's mute runs to (0: not muted; 2147483647: muted for good).
    public var mutedUntil: Int64
    /// Whether mentions and reactions go to the messages group.
    public var disableMentions: Bool
    /// Whether pinned messages go to the messages group.
    public var disablePinned: Bool

    init(_ chat: Chat, clock: Int64) {
        self.chat = chat.name
        unread = chat.unreadCount
        unreadMentions = chat.unreadMentions
        readMaxId = chat.readMaxId
        muted = chat.isMuted(at: clock)
        mutedUntil = chat.mutedUntil
        disableMentions = chat.disableMentions
        disablePinned = chat.disablePinned
    }
}

/// A visible group with its visible notifications (TDLib's `notificationGroup` in
/// `updateActiveNotifications`).
public struct VisibleGroup: Hashable, Sendable {
    /// The group's id.
    public var groupId: Int64
    /// The group's type.
    public var type: GroupType
    /// The group's chat.
    public var chat: String
    /// The group's total count (SEMANTICS §7).
    public var totalCount: Int
    /// The visible notifications, ascending id (at most `groupSizeMax`).
    public var notifications: [HeraldNotification]

    /// Creates a visible group.
    public init(groupId: Int64, type: GroupType, chat: String, totalCount: Int, notifications: [HeraldNotification]) {
        self.groupId = groupId
        self.type = type
        self.chat = chat
        self.totalCount = totalCount
        self.notifications = notifications
    }
}

extension Account {
    /// The visible groups in visible order, with their visible notifications.
    var visibleGroups: [VisibleGroup] {
        visible.map { index in
            let group = groups[Int(index)]
            return VisibleGroup(
                groupId: group.id, type: group.type, chat: chats[Int(group.chat)].name,
                totalCount: totalCount(of: Int(index)), notifications: group.active.suffix(groupSizeMax).map { publicValue(of: $0) })
        }
    }
}
