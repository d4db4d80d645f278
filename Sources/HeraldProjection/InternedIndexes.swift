/// A cache from one ``NameInterner``'s ids to the projection's own indexes (of accounts, or
/// of one account's chats), filled as ids first appear.
///
/// It is not state: the projection keeps it beside its accounts, and no comparison looks at
/// it. It belongs to one interner, by token, and is emptied when ids of another arrive or
/// when the indexes it maps to change.
struct InternedIndexes: Sendable {
    /// The token of the interner whose ids it maps; 0 before any.
    private var token: UInt64 = 0
    /// Interner id → index; -1 where not known yet.
    private var indexes: [Int32] = []

    /// The index of interner id `id` of `token`, or -1 when not known (then the caller
    /// resolves the name and records it with ``record(_:for:token:)``).
    @inline(__always)
    func index(of id: Int32, token: UInt64) -> Int {
        // One unsigned comparison also turns away -1 (no chat) and an empty cache.
        guard token == self.token, UInt32(bitPattern: id) < UInt32(truncatingIfNeeded: indexes.count) else { return -1 }
        return Int(indexes[Int(id)])
    }

    /// Records that interner id `id` of `token` maps to `index`.
    mutating func record(_ index: Int, for id: Int32, token: UInt64) {
        if token != self.token {
            self.token = token
            indexes.removeAll()
        }
        if Int(id) >= indexes.count {
            indexes.append(contentsOf: repeatElement(-1, count: Int(id) + 1 - indexes.count))
        }
        indexes[Int(id)] = Int32(index)
    }
}
