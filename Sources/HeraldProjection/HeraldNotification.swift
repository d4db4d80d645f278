import HeraldEvents

/// One notification: what a client shows for one object (SEMANTICS §4, STATE.md "Notification").
///
/// Named so that it never clashes with Foundation's `Notification` in a file that imports both.
///
/// Body, sender and thread are kept packed as the projection stores them (`PackedTexts`) and
/// decoded when read: updates carry many notifications that nobody reads field by field, and
/// copying one costs two retains instead of three string allocations. The value is 64 bytes.
public struct HeraldNotification: Hashable, Sendable {
    /// The notification id, unique and increasing inside its account (starts at 1).
    public var id: Int64
    /// The id of the object inside its chat and class (a message id, a call id, …).
    public var objectId: Int64
    /// Unix seconds, from the `notify` event (or the upgrade that replaced it).
    public var date: Int64
    /// The title, when known.
    public var title: String?
    /// Body, sender and thread. The packing is canonical, so equality and hashing are those
    /// of the three texts.
    var texts: PackedTexts
    /// What kind of object the notification is about.
    public var kind: NotificationKind
    /// Whether the notification must be shown without sound.
    public var silent: Bool
    /// Whether the content came from a push payload only (and may be upgraded).
    public var partial: Bool
    /// Where the notification is in its lifecycle (SEMANTICS §5).
    public var status: NotificationStatus
}

// In an extension, so that the struct keeps its memberwise initializer (internal: the
// projection builds notifications from texts it already holds packed).
extension HeraldNotification {
    /// Creates a notification.
    public init(
        id: Int64, kind: NotificationKind, objectId: Int64, date: Int64,
        silent: Bool = false, partial: Bool = false, status: NotificationStatus = .active,
        title: String? = nil, body: String? = nil, sender: String? = nil, thread: String? = nil
    ) {
        self.init(
            id: id, objectId: objectId, date: date, title: title,
            texts: PackedTexts(body: body, sender: sender, thread: thread), kind: kind, silent: silent,
            partial: partial, status: status)
    }

    /// The text, when known.
    public var body: String? { get { texts[.body] } set { texts[.body] = newValue } }
    /// The sender, when known.
    public var sender: String? { get { texts[.sender] } set { texts[.sender] = newValue } }
    /// The thread, when known.
    public var thread: String? { get { texts[.thread] } set { texts[.thread] = newValue } }

    /// Whether a client would see the same thing for `self` and `other`: every field of the
    /// JSON form (so not `status`), texts compared as bytes like the JSON form's (`String ==`
    /// would equate canonically equivalent titles, "é" and "e" + U+0301).
    public func hasSameContent(as other: HeraldNotification) -> Bool {
        id == other.id && kind == other.kind && objectId == other.objectId && date == other.date
            && silent == other.silent && partial == other.partial
            && Self.sameBytes(title, other.title)
            && texts == other.texts
    }

    /// Whether two optional texts are both absent or have the same bytes.
    private static func sameBytes(_ lhs: String?, _ rhs: String?) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Equal when the content (``hasSameContent(as:)``, texts as bytes) and the status are.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.hasSameContent(as: rhs) && lhs.status == rhs.status
    }

    /// Hashes what `==` compares, the title as bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(objectId)
        hasher.combine(date)
        hasher.combine(title?.utf8.count ?? -1)
        if let title { for byte in title.utf8 { hasher.combine(byte) } }
        hasher.combine(texts)
        hasher.combine(kind)
        hasher.combine(silent)
        hasher.combine(partial)
        hasher.combine(status)
    }
}

/// Where a notification is in its lifecycle (SEMANTICS §5). Nothing ever returns to `active`.
public enum NotificationStatus: Hashable, Sendable {
    /// In its group and may be shown.
    case active
    /// Swiped away by the user: never shown again, still counted in its group while unread.
    case dismissed
    /// Gone for good and not counted.
    case cleared(ClearReason)
}

/// Why a notification was cleared (SEMANTICS §5–§6).
public enum ClearReason: String, CaseIterable, Hashable, Sendable {
    /// Its message was read (`read`) or its reaction seen (`readReactions`).
    case read
    /// Its message was deleted.
    case deleted
    /// Its call ended.
    case ended
    /// Its chat was muted.
    case muted
    /// A chat setting (`disableMentions`, `disablePinned`) turned it off.
    case settings
    /// A newer pinned message replaced it.
    case replaced
}

/// The type of a notification group (SEMANTICS §3): each chat has at most one of each.
public enum GroupType: String, CaseIterable, Hashable, Sendable {
    /// Messages, and mentions, pinned messages and reactions the chat's settings route here.
    case messages
    /// Mentions, pinned messages and reactions.
    case mentions
    /// Calls.
    case calls
    /// The secret chat's creation.
    case secretChat

    /// Whether dismissed notifications count in the group's `totalCount` (SEMANTICS §7).
    @inlinable
    public var countsDismissed: Bool { self == .messages || self == .mentions }

    /// A small integer for the slot arrays and the snapshot.
    @usableFromInline
    var index: Int {
        switch self {
        case .messages: 0
        case .mentions: 1
        case .calls: 2
        case .secretChat: 3
        }
    }

    /// The type with ``index`` `index`, if any.
    static func at(_ index: Int) -> GroupType? {
        switch index {
        case 0: .messages
        case 1: .mentions
        case 2: .calls
        case 3: .secretChat
        default: nil
        }
    }
}
