/// Live notification id → index of its group: an open-addressing hash map with linear
/// probing and backward-shift deletion, hashing ids with one multiplication.
///
/// It replaces `Dictionary<Int64, Int32>` on the hot path, where SipHash of every id cost
/// more than the rest of a typical lookup. Ids are positive, so 0 marks an empty slot.
struct NotificationIndex: Sendable {
    private var keys: [Int64] = []
    private var values: [Int32] = []
    /// The number of ids stored.
    private(set) var count = 0

    /// Creates an empty index.
    init() {}

    @inline(__always)
    private func bucket(_ id: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (keys.count - 1)
    }

    /// The group of notification `id`; setting `nil` removes it.
    subscript(id: Int64) -> Int32? {
        @inline(__always) get {
            guard count > 0 else { return nil }
            var i = bucket(id)
            while true {
                let key = keys[i]
                if key == id { return values[i] }
                if key == 0 { return nil }
                i = (i + 1) & (keys.count - 1)
            }
        }
        set {
            if let newValue { insert(id, newValue) } else { remove(id) }
        }
    }

    private mutating func insert(_ id: Int64, _ value: Int32) {
        precondition(id > 0, "notification ids are positive")
        if (count + 1) * 4 > keys.count * 3 { grow() }
        var i = bucket(id)
        while true {
            let key = keys[i]
            if key == id { values[i] = value; return }
            if key == 0 {
                keys[i] = id
                values[i] = value
                count += 1
                return
            }
            i = (i + 1) & (keys.count - 1)
        }
    }

    private mutating func remove(_ id: Int64) {
        guard count > 0 else { return }
        let mask = keys.count - 1
        var i = bucket(id)
        while keys[i] != id {
            if keys[i] == 0 { return }
            i = (i + 1) & mask
        }
        // Backward-shift deletion: move later entries of the cluster into the hole when
        // their home bucket does not lie strictly between the hole and them.
        var hole = i
        var j = (i + 1) & mask
        while keys[j] != 0 {
            let home = bucket(keys[j])
            let between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j)
            if !between {
                keys[hole] = keys[j]
                values[hole] = values[j]
                hole = j
            }
            j = (j + 1) & mask
        }
        keys[hole] = 0
        values[hole] = 0
        count -= 1
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldValues = values
        let capacity = max(16, keys.count * 2)
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: 0, count: capacity)
        count = 0
        for (i, key) in oldKeys.enumerated() where key != 0 { insert(key, oldValues[i]) }
    }

    /// Every (id, group) pair, in no particular order.
    var pairs: [(id: Int64, group: Int32)] {
        zip(keys, values).filter { $0.0 != 0 }.map { ($0.0, $0.1) }
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
