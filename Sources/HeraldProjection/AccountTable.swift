import HeraldEvents

/// The projection's accounts: names interned to indexes of a contiguous array, so applying
/// an event mutates its account in place (a dictionary's value would risk a copy-on-write
/// copy of the whole account) and costs one cheap byte hash of the account name.
struct AccountTable: Sendable {
    /// Account name → index in ``states``.
    private var index = NameTable()
    /// Account states, by index.
    private(set) var states: [Account] = []

    /// Every account's state.
    var values: [Account] { states }

    /// Every account's name, in order of first appearance.
    var keys: [String] { index.names }

    /// The state of account `name`; setting `nil` removes the account.
    subscript(name: String) -> Account? {
        get { index.index(of: name).map { states[$0] } }
        set {
            if let newValue {
                let (i, isNew) = index.intern(name)
                if isNew { states.append(newValue) } else { states[i] = newValue }
            } else if let i = index.index(of: name) {
                index.swapRemove(at: i)
                states.swapAt(i, states.count - 1)
                states.removeLast()
            }
        }
    }

    /// Runs `body` on account `name` in place, with its index, creating it with
    /// `makeDefault` when new.
    @inline(__always)
    mutating func modify<R>(_ name: String, default makeDefault: () -> Account, _ body: (inout Account, Int) -> R) -> R {
        let i = intern(name, default: makeDefault)
        return body(&states[i], i)
    }

    /// The index of account `name`, creating it with `makeDefault` when new.
    @inline(__always)
    mutating func intern(_ name: String, default makeDefault: () -> Account) -> Int {
        let (i, isNew) = index.intern(name)
        if isNew { states.append(makeDefault()) }
        return i
    }

    /// Runs `body` on the account at `index` in place.
    @inline(__always)
    mutating func modify<R>(at index: Int, _ body: (inout Account) -> R) -> R {
        body(&states[index])
    }

    /// Runs `body` on the account at `index` in place, lending it `scratch`.
    @inline(__always)
    mutating func modify<R>(
        at index: Int, _ scratch: inout EventScratch, _ body: (inout Account, inout EventScratch) -> R
    ) -> R {
        body(&states[index], &scratch)
    }

    /// Runs `body` on the account at `index` in place, lending it the cache of its
    /// interned chat ids and `scratch`.
    @inline(__always)
    mutating func modify<R>(
        at index: Int, _ chatIds: inout InternedIndexes, _ scratch: inout EventScratch,
        _ body: (inout Account, inout InternedIndexes, inout EventScratch) -> R
    ) -> R {
        body(&states[index], &chatIds, &scratch)
    }
}

extension AccountTable: Equatable {
    /// Equal when the same names map to equal states, whatever the order of appearance.
    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.states.count == rhs.states.count else { return false }
        for (i, name) in lhs.index.names.enumerated() {
            guard let j = rhs.index.index(of: name), lhs.states[i] == rhs.states[j] else { return false }
        }
        return true
    }
}
