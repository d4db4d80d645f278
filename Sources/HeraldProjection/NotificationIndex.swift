/// Live notification id → index of its group: an open-addressing hash map with linear
/// probing and backward-shift deletion, hashing ids with one multiplication.
///
/// It replaces `Dictionary<Int64, Int32>` on the hot path, where SipHash of every id cost
/// more than the rest of a typical lookup. Ids are positive, so 0 marks an empty slot. An
/// id and its group share one 12-byte slot: a lookup in a large index misses the cache once,
/// where separate key and value arrays missed it twice, in the same memory.
struct NotificationIndex: Sendable {
    /// One slot: a notification id (0 = empty), as two 32-bit halves so that the slot takes
    /// 12 bytes rather than 16, and its group.
    private struct Slot: Sendable {
        private var low: UInt32
        private var high: UInt32
        var group: Int32

        @inline(__always)
        init(id: Int64, group: Int32) {
            low = UInt32(truncatingIfNeeded: id)
            high = UInt32(truncatingIfNeeded: id >> 32)
            self.group = group
        }

        @inline(__always)
        var id: Int64 { Int64(high) << 32 | Int64(low) }
    }

    private var slots: [Slot] = []
    /// The number of ids stored.
    private(set) var count = 0

    /// Creates an empty index.
    init() {}

    @inline(__always)
    private func bucket(_ id: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (slots.count - 1)
    }

    /// The group of notification `id`; setting `nil` removes it.
    subscript(id: Int64) -> Int32? {
        @inline(__always) get {
            guard count > 0 else { return nil }
            var i = bucket(id)
            while true {
                let slot = slots[i]
                if slot.id == id { return slot.group }
                if slot.id == 0 { return nil }
                i = (i + 1) & (slots.count - 1)
            }
        }
        set {
            if let newValue { insert(id, newValue) } else { remove(id) }
        }
    }

    private mutating func insert(_ id: Int64, _ value: Int32) {
        precondition(id > 0, "notification ids are positive")
        if (count + 1) * 4 > slots.count * 3 { grow() }
        var i = bucket(id)
        while true {
            let key = slots[i].id
            if key == id { slots[i].group = value; return }
            if key == 0 {
                slots[i] = Slot(id: id, group: value)
                count += 1
                return
            }
            i = (i + 1) & (slots.count - 1)
        }
    }

    private mutating func remove(_ id: Int64) {
        guard count > 0 else { return }
        let mask = slots.count - 1
        var i = bucket(id)
        while slots[i].id != id {
            if slots[i].id == 0 { return }
            i = (i + 1) & mask
        }
        // Backward-shift deletion: move later entries of the cluster into the hole when
        // their home bucket does not lie strictly between the hole and them.
        var hole = i
        var j = (i + 1) & mask
        while slots[j].id != 0 {
            let home = bucket(slots[j].id)
            let between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j)
            if !between {
                slots[hole] = slots[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        slots[hole] = Slot(id: 0, group: 0)
        count -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(id: 0, group: 0), count: max(16, slots.count * 2))
        count = 0
        for slot in old where slot.id != 0 { insert(slot.id, slot.group) }
    }

    /// Every (id, group) pair, in no particular order.
    var pairs: [(id: Int64, group: Int32)] {
        slots.filter { $0.id != 0 }.map { ($0.id, $0.group) }
    }
}

extension NotificationIndex: Hashable {
    /// Equal when the same ids map to the same groups (slot layout aside).
    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (id, group) in lhs.pairs where rhs[id] != group { return false }
        return true
    }

    func hash(into hasher: inout Hasher) { hasher.combine(count) }
}
