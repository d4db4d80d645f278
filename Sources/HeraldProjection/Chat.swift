import HeraldEvents

/// A message (class `msg`, SEMANTICS §2) a `notify` named in its chat, with what it is now:
/// unread or not, an unread mention or not, and the notification it got.
///
/// 16 bytes: the flags ride in the top byte of the notification id (ids stay below 2^56),
/// because every such message of every chat is held in memory.
struct UnreadMessage: Hashable, Sendable {
    /// The message id.
    var id: Int64
    /// ``notificationId`` in the low 56 bits, the flags above.
    private var packed: UInt64

    private static let idMask: UInt64 = (1 << 56) - 1
    private static let mentionBit: UInt64 = 1 << 56
    private static let pinnedBit: UInt64 = 1 << 57
    private static let mentionsGroupBit: UInt64 = 1 << 58
    private static let unreadBit: UInt64 = 1 << 59
    private static let unreadMentionBit: UInt64 = 1 << 60

    /// Creates a message named by a `notify` of `kind`: unread, and an unread mention when
    /// `kind` is `mention` (SEMANTICS 1.2 §4 rule 4).
    @inline(__always)
    init(id: Int64, notificationId: Int64, kind: NotificationKind) {
        self.id = id
        packed = UInt64(notificationId) | Self.unreadBit
        if kind == .mention { packed |= Self.mentionBit | Self.unreadMentionBit }
        if kind == .pinned { packed |= Self.pinnedBit }
    }

    /// Creates a message from its parts (snapshots).
    init(id: Int64, notificationId: Int64, flags: UInt8) {
        self.id = id
        packed = UInt64(notificationId) | UInt64(flags & 0x1F) << 56
    }

    /// The flags byte (snapshots): bit 0 mention, 1 pinned, 2 in the mentions group, 3
    /// unread, 4 unread mention.
    var flags: UInt8 { UInt8(truncatingIfNeeded: packed >> 56) }

    /// The notification created for it, or 0 when none was (muted chat, `unreadOnly`, …).
    /// The notification may have been cleared since: check ``Account/live``. Kept after it
    /// is cleared, for the dismissal mark (SEMANTICS 1.2 §6 `dismissGroup`).
    var notificationId: Int64 {
        @inline(__always) get { Int64(packed & Self.idMask) }
        @inline(__always) set { packed = UInt64(newValue) | (packed & ~Self.idMask) }
    }

    /// Whether the message was notified as a mention.
    var isMention: Bool {
        @inline(__always) get { packed & Self.mentionBit != 0 }
    }

    /// Whether the message was notified as a pinned message.
    var isPinned: Bool {
        @inline(__always) get { packed & Self.pinnedBit != 0 }
    }

    /// Whether its notification went to the chat's mentions group (else to its messages group).
    var inMentionsGroup: Bool {
        @inline(__always) get { packed & Self.mentionsGroupBit != 0 }
        @inline(__always) set { packed = newValue ? packed | Self.mentionsGroupBit : packed & ~Self.mentionsGroupBit }
    }

    /// Whether the message counts in the chat's `unread`.
    var isUnread: Bool {
        @inline(__always) get { packed & Self.unreadBit != 0 }
        @inline(__always) set { packed = newValue ? packed | Self.unreadBit : packed & ~Self.unreadBit }
    }

    /// Whether the message counts in the chat's `unreadMentions`.
    var isUnreadMention: Bool {
        @inline(__always) get { packed & Self.unreadMentionBit != 0 }
        @inline(__always) set { packed = newValue ? packed | Self.unreadMentionBit : packed & ~Self.unreadMentionBit }
    }
}

/// The identity of a non-message object inside a chat (SEMANTICS §2): reactions, calls and
/// secret chats are remembered for as long as the account lives, so duplicates stay duplicates.
struct ObjectKey: Hashable, Sendable, Comparable {
    var objectClass: ObjectClass
    var id: Int64

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.objectClass.rawValue, lhs.id) < (rhs.objectClass.rawValue, rhs.id)
    }
}

/// Everything an account knows about one chat. Chats are interned: the account refers to
/// them by index, so hot paths never hash or compare chat names.
///
/// Message identities are not kept forever: a message named by a `notify` is in ``unread``
/// (unread, an unread mention, with a live notification, or above ``readMaxId`` and the
/// cleared-history mark, where a later `notify` of it must stay a duplicate), deleted (in
/// ``deleted`` or the account's deleted set), or at or below ``readMaxId`` or
/// ``clearedMark`` with nothing left to it, where no rule can tell it apart from an unknown
/// message (SEMANTICS §4 rule 2).
struct Chat: Hashable, Sendable {
    /// The chat's name, as events spell it.
    let name: String
    /// The highest `maxId` read so far (0 before any `read`).
    var readMaxId: Int64 = 0
    /// The messages named and remembered (see above), ascending id. Despite the name, not
    /// all of them are unread: ``unreadCount`` counts those that are.
    var unread: [UnreadMessage] = []
    /// How many of ``unread`` are unread (the chat's `unread`, SEMANTICS §7).
    var unreadCount: Int = 0
    /// How many of ``unread`` are unread mentions.
    var unreadMentions: Int = 0
    /// The cleared-history mark: the largest `maxId` of a `delete` with `maxId` (SEMANTICS 1.2 §6).
    var clearedMark: Int64 = 0
    /// The dismissal marks of the messages and mentions groups (SEMANTICS 1.2 §6 `dismissGroup`).
    var messagesDismissalMark: Int64 = 0
    var mentionsDismissalMark: Int64 = 0
    /// Ids deleted in this chat, all above ``readMaxId`` (lower ones are forgotten).
    var deleted = IdSet()
    /// Reaction, call and secret chat identities named by a `notify`, with their
    /// notification id (0 when none was created).
    var objects = ObjectTable()
    /// The chat's groups, by ``GroupType/index``; -1 when not created yet.
    var groupSlots: SIMD4<Int32> = SIMD4(repeating: -1)
    /// The latest pinned notification (0 when none); it may have been cleared since.
    var pinnedNotificationId: Int64 = 0
    /// The date the chat's mute runs to (0: not muted; SEMANTICS 1.2 §1).
    var mutedUntil: Int64 = 0
    /// Whether a reaction notification ever went to the messages group (a `read` then
    /// looks there for reactions to clear).
    var hasReactionInMessages = false
    /// Whether mentions and reactions go to the messages group.
    var disableMentions = false
    /// Whether pinned messages go to the messages group.
    var disablePinned = false
    /// The chat's secret chat notification (0 when none was ever created; it may have been
    /// cleared since).
    var secretChatNotificationId: Int64 = 0

    /// Creates an empty chat.
    init(name: String) {
        self.name = name
    }

    /// Whether the chat is muted at `time` (SEMANTICS 1.2 §2).
    @inline(__always)
    func isMuted(at time: Int64) -> Bool { mutedUntil > time }

    /// The dismissal mark of the group of `type` (0 for groups without msg-class notifications).
    @inline(__always)
    func dismissalMark(_ type: GroupType) -> Int64 {
        switch type {
        case .messages: messagesDismissalMark
        case .mentions: mentionsDismissalMark
        case .calls, .secretChat: 0
        }
    }

    /// Below this id (inclusive), a message no rule can tell from an unknown one needs no entry.
    @inline(__always)
    var forgottenBelow: Int64 { max(readMaxId, clearedMark) }

    /// The index of the group of `type`, or `nil`.
    @inline(__always)
    func group(_ type: GroupType) -> Int32? {
        let slot = groupSlots[type.index]
        return slot < 0 ? nil : slot
    }

    /// The position of the first unread message whose id is `>= id`.
    @inline(__always)
    func unreadLowerBound(_ id: Int64) -> Int {
        if let last = unread.last, last.id < id { return unread.count }
        var low = 0
        var high = unread.count
        while low < high {
            let mid = (low + high) >> 1
            if unread[mid].id < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position after the last remembered message whose id is `<= id`.
    @inline(__always)
    func endOfMessages(upTo id: Int64) -> Int { id == .max ? unread.count : unreadLowerBound(id + 1) }

    /// The position of the unread message `id`, or `nil`.
    @inline(__always)
    func unreadIndex(of id: Int64) -> Int? {
        let i = unreadLowerBound(id)
        return i < unread.count && unread[i].id == id ? i : nil
    }
}
