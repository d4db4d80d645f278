/// A set of positive ids (deleted message ids): open addressing with linear probing, hashing
/// an id with one multiplication, like ``NotificationIndex``.
///
/// It replaces `Set<Int64>` on the `notify` path, where every message of a chat with a
/// deletion asks whether it was deleted, and SipHash of the id cost more than the rest of the
/// lookup. Ids are positive, so 0 marks an empty slot. Iteration order is unspecified.
struct IdSet: Sendable, Sequence {
    private var slots: [Int64] = []
    /// The number of ids stored.
    private(set) var count = 0

    /// Creates an empty set.
    init() {}

    /// Whether the set is empty.
    @inline(__always)
    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func bucket(_ id: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (slots.count - 1)
    }

    /// Whether `id` is in the set.
    @inline(__always)
    func contains(_ id: Int64) -> Bool {
        guard count > 0 else { return false }
        var i = bucket(id)
        while true {
            let slot = slots[i]
            if slot == id { return true }
            if slot == 0 { return false }
            i = (i + 1) & (slots.count - 1)
        }
    }

    /// Adds `id` (positive); nothing changes when it is already there.
    mutating func insert(_ id: Int64) {
        precondition(id > 0, "ids are positive")
        if (count + 1) * 4 > slots.count * 3 { resize(capacity: Swift.max(8, slots.count * 2)) }
        var i = bucket(id)
        while true {
            let slot = slots[i]
            if slot == id { return }
            if slot == 0 {
                slots[i] = id
                count += 1
                return
            }
            i = (i + 1) & (slots.count - 1)
        }
    }

    /// Removes every id that `shouldRemove` selects, giving memory back when few remain.
    mutating func removeAll(where shouldRemove: (Int64) -> Bool) {
        let kept = filter { !shouldRemove($0) }
        guard kept.count != count else { return }
        self = IdSet()
        guard !kept.isEmpty else { return }
        var capacity = 8
        while kept.count * 4 > capacity * 3 { capacity *= 2 }
        resize(capacity: capacity)
        for id in kept { insert(id) }
    }

    private mutating func resize(capacity: Int) {
        let old = slots
        slots = Array(repeating: 0, count: capacity)
        count = 0
        for id in old where id != 0 { insert(id) }
    }

    /// The ids, in no particular order.
    func makeIterator() -> some IteratorProtocol<Int64> {
        slots.lazy.filter { $0 != 0 }.makeIterator()
    }
}

extension IdSet: Hashable {
    /// Equal when they hold the same ids (slot layout aside).
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs.contains($0) }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(count) }
}
