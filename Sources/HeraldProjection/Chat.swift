import HeraldEvents

/// A message that is unread in its chat (SEMANTICS §4 rule 3), with the notification it got.
///
/// 16 bytes: the mention flag rides in the top bit of the notification id (ids stay below
/// 2^62), because every unread message of every chat is held in memory.
struct UnreadMessage: Hashable, Sendable {
    /// The message id.
    var id: Int64
    /// ``notificationId`` with ``isMention`` in bit 63.
    private var packed: UInt64

    /// Creates an unread message.
    @inline(__always)
    init(id: Int64, notificationId: Int64, isMention: Bool) {
        self.id = id
        packed = UInt64(notificationId) | (isMention ? 1 << 63 : 0)
    }

    /// The notification created for it, or 0 when none was (muted chat). The notification
    /// may have been cleared since (mute, settings, replaced): check ``Account/live``.
    var notificationId: Int64 {
        @inline(__always) get { Int64(packed & ~(1 << 63)) }
        @inline(__always) set { packed = UInt64(newValue) | (packed & (1 << 63)) }
    }

    /// Whether the message was notified as a mention (it counts in `unreadMentions`).
    var isMention: Bool {
        @inline(__always) get { packed >> 63 != 0 }
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
/// Message identities are not kept forever: a message named by a `notify` is either unread
/// (in ``unread``), deleted (in ``deleted`` or the account's deleted set) or at or below
/// ``readMaxId``, and in the last case no rule can tell it apart from an unknown message.
struct Chat: Hashable, Sendable {
    /// The chat's name, as events spell it.
    let name: String
    /// The highest `maxId` read so far (0 before any `read`).
    var readMaxId: Int64 = 0
    /// Unread messages, ascending id, all above ``readMaxId``.
    var unread: [UnreadMessage] = []
    /// How many of ``unread`` are mentions.
    var unreadMentions: Int = 0
    /// Ids deleted in this chat, all above ``readMaxId`` (lower ones are forgotten).
    var deleted = IdSet()
    /// Reaction, call and secret chat identities named by a `notify`, with their
    /// notification id (0 when none was created).
    var objects = ObjectTable()
    /// The chat's groups, by ``GroupType/index``; -1 when not created yet.
    var groupSlots: SIMD4<Int32> = SIMD4(repeating: -1)
    /// The latest pinned notification (0 when none); it may have been cleared since.
    var pinnedNotificationId: Int64 = 0
    /// Whether the chat is muted.
    var muted = false
    /// Whether mentions and reactions go to the messages group.
    var disableMentions = false
    /// Whether pinned messages go to the messages group.
    var disablePinned = false
    /// Whether a secret chat notification was ever created in the chat.
    var hasSecretChatNotification = false

    /// Creates an empty chat.
    init(name: String) {
        self.name = name
    }

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

    /// The position of the unread message `id`, or `nil`.
    @inline(__always)
    func unreadIndex(of id: Int64) -> Int? {
        let i = unreadLowerBound(id)
        return i < unread.count && unread[i].id == id ? i : nil
    }
}
