import HeraldEvents

/// One notification group of a chat (SEMANTICS §3) with its live notifications.
///
/// Cleared notifications are dropped, not kept: only active and dismissed ones remain,
/// each list in ascending id. Because ids grow in log order, a new notification is always
/// appended at the end of ``active``.
///
/// 40 bytes: the fields are declared in an order that leaves no padding but the tail's, and
/// the id is kept in 32 bits (group indexes are `Int32` throughout). Every group an account
/// ever created is held, so each byte here is ~0.35 B per live notification on
/// projection-bench's stream.
struct NotificationGroup: Hashable, Sendable {
    /// ``id``, which fits in 32 bits.
    private let storedId: Int32
    /// The index of the group's chat in ``Account/chats``.
    let chat: Int32
    /// Active notifications, ascending id.
    var active: [StoredNotification] = []
    /// Dismissed notifications, ascending id.
    var dismissed: [StoredNotification] = []
    /// The `lastDate` of the group's candidate key (SEMANTICS §8) as stored in
    /// ``Account/candidates``; `nil` when the group has no active notification.
    var candidateDate: Int64?
    /// The largest date among ``active`` (SEMANTICS 1.2 §8 `lastDate`), `Int64.min` when
    /// there is none; kept current as notifications come and go.
    var newestDate: Int64 = .min
    /// The group's type.
    let type: GroupType
    /// Whether the group is visible (among the first `groupCountMax` candidates).
    var isVisible = false
    /// The group's entry in the event's dirty groups (`EventScratch.dirty`), or, while its
    /// account's view is stale, in ``Account/staleGroups``; -1 otherwise (always, in a
    /// settled account).
    var dirtyIndex: Int32 = -1

    /// Creates an empty group.
    init(id: Int64, type: GroupType, chat: Int32) {
        precondition(id > 0 && id <= Int64(Int32.max), "group id out of range")
        storedId = Int32(id)
        self.type = type
        self.chat = chat
    }

    /// The group id (the group's index in ``Account/groups`` plus one).
    var id: Int64 {
        @inline(__always) get { Int64(storedId) }
    }

    /// Ends the current event for the group: sets whether it is visible, and that it is no
    /// longer dirty.
    @inline(__always)
    mutating func endEvent(isVisible: Bool) {
        self.isVisible = isVisible
        dirtyIndex = -1
    }

    /// Recomputes ``newestDate`` from ``active``.
    mutating func recomputeNewestDate() {
        var newest = Int64.min
        for i in 0..<active.count where active[i].date > newest { newest = active[i].date }
        newestDate = newest
    }

    /// The group's `lastDate` (SEMANTICS 1.2 §8), `nil` when it has no active notification.
    @inline(__always)
    var lastDate: Int64? { active.isEmpty ? nil : newestDate }
}

extension Array where Element == StoredNotification {
    /// The position of the first notification whose id is `>= id` (the list is ascending).
    @inline(__always)
    func lowerBound(id: Int64) -> Int {
        if let last, last.id < id { return count }
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) >> 1
            if self[mid].id < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The position of notification `id`, or `nil`.
    @inline(__always)
    func index(ofId id: Int64) -> Int? {
        let i = lowerBound(id: id)
        return i < count && self[i].id == id ? i : nil
    }

    /// Inserts `notification` at its place in id order.
    @inline(__always)
    mutating func insertSorted(_ notification: StoredNotification) {
        makeRoomForOneMore()
        insert(notification, at: lowerBound(id: notification.id))
    }

    /// Appends `notification`, whose id is above every id in the list.
    @inline(__always)
    mutating func appendNewest(_ notification: StoredNotification) {
        makeRoomForOneMore()
        append(notification)
    }

    /// Grows a full list by a quarter instead of doubling it: a group's notifications are the
    /// bulk of the projection's memory, and with the standard doubling a third of that memory
    /// is unused capacity on average. Still amortized O(1) per insertion.
    @inline(__always)
    private mutating func makeRoomForOneMore() {
        let count = self.count
        if count == capacity { reserveCapacity(count + Swift.max(2, count >> 1)) }
    }
}

/// A candidate group's key (SEMANTICS §8); ``Account/candidates`` keeps them ascending, so
/// the visible groups are the last `groupCountMax`, read backwards.
struct CandidateKey: Hashable, Sendable, Comparable {
    /// The date of the group's active notification with the largest id.
    var date: Int64
    /// The group's index (group id minus one, so it orders like the group id).
    var group: Int32

    @inline(__always)
    static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.date != rhs.date ? lhs.date < rhs.date : lhs.group < rhs.group
    }
}

/// The candidate keys of an account's groups (SEMANTICS §8), ascending and each once, with
/// stale keys among them: a group whose key changes gets its new key, and its old one stays
/// where it is until it reaches the top or the stale keys outnumber a quarter of the list.
/// A key is live when it is its group's ``NotificationGroup/candidateDate`` (``Account/isLive(_:)``).
///
/// Leaving the old key in place spares a search for it and a shift of every key above it at
/// each event; readers skip stale keys. Which keys are stale depends on the order of past
/// events, so comparisons of projections first drop them (``Account/dropAllStaleCandidates()``).
struct CandidateList: Hashable, Sendable {
    /// The keys, ascending, stale ones included.
    var keys: [CandidateKey] = []
    /// How many of ``keys`` are stale.
    var stale = 0
}

extension Array {
    /// Appends `element`, first making room for `capacity` elements when the array is empty.
    /// One element goes in as an array literal, which allocates its buffer directly, where
    /// `reserveCapacity` on an empty array takes the general growth path (~60 instructions more).
    @inline(__always)
    mutating func append(_ element: Element, reservingIfEmpty capacity: Int) {
        if isEmpty {
            if capacity <= 1 {
                self = [element]
                return
            }
            reserveCapacity(capacity)
        }
        append(element)
    }

    /// Inserts `element` at `index`, appending when it goes at the end (the common case for
    /// ids that mostly grow), which skips the general insertion's range replacement.
    @inline(__always)
    mutating func insertOrAppend(_ element: Element, at index: Int) {
        if index == count { append(element) } else { insert(element, at: index) }
    }

    /// Gives back memory after removals: frees the buffer when empty, and when at most a
    /// quarter of a buffer of more than 4 elements is used, moves the elements to a buffer
    /// twice their count. Amortized O(1) per removal; keeps live state, not history, in
    /// memory (arrays never shrink by themselves).
    @inline(__always)
    mutating func shrinkIfSparse() {
        if isEmpty {
            if capacity > 0 { self = [] }
            return
        }
        let capacity = self.capacity
        guard capacity > 4, count * 4 <= capacity else { return }
        var compact: [Element] = []
        compact.reserveCapacity(Swift.max(2, count * 2))
        compact.append(contentsOf: self)
        self = compact
    }
}

extension NotificationKind {
    /// Whether a live notification of this kind counts in its mentions group's total on top
    /// of the chat's unread mentions (SEMANTICS 1.2 §7).
    @inline(__always)
    var countsInMentionsTotal: Bool { self == .pinned || self == .reaction }
}
