import HeraldEvents

/// The projection's accounts: names interned to indexes of a contiguous array, so applying
/// an event mutates its account in place (a dictionary's value would risk a copy-on-write
/// copy of the whole account) and costs one hash of the account name.
struct AccountTable: Sendable {
    /// Account name → index in ``states`` and ``names``.
    private var index: [NameKey: Int] = [:]
    /// Account names, in order of first appearance.
    private(set) var names: [String] = []
    /// Account states, parallel to ``names``.
    private(set) var states: [Account] = []

    /// Every account's state.
    var values: [Account] { states }

    /// Every account's name.
    var keys: [String] { names }

    /// The state of account `name`; setting `nil` removes the account.
    subscript(name: String) -> Account? {
        get { index[NameKey(name)].map { states[$0] } }
        set {
            let key = NameKey(name)
            if let newValue {
                if let i = index[key] {
                    states[i] = newValue
                } else {
                    index[key] = states.count
                    names.append(name)
                    states.append(newValue)
                }
            } else if let i = index.removeValue(forKey: key) {
                // Swap-remove, fixing the index of the account moved into the hole.
                let last = states.count - 1
                if i != last {
                    states.swapAt(i, last)
                    names.swapAt(i, last)
                    index[NameKey(names[i])] = i
                }
                states.removeLast()
                names.removeLast()
            }
        }
    }

    /// Runs `body` on account `name` in place, creating it with `makeDefault` when new.
    @inline(__always)
    mutating func modify<R>(_ name: String, default makeDefault: () -> Account, _ body: (inout Account) -> R) -> R {
        let key = NameKey(name)
        let i: Int
        if let existing = index[key] {
            i = existing
        } else {
            i = states.count
            index[key] = i
            names.append(name)
            states.append(makeDefault())
        }
        return body(&states[i])
    }
}

extension AccountTable: Equatable {
    /// Equal when the same names map to equal states, whatever the order of appearance.
    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.states.count == rhs.states.count else { return false }
        for (i, name) in lhs.names.enumerated() {
            guard let j = rhs.index[NameKey(name)], lhs.states[i] == rhs.states[j] else { return false }
        }
        return true
    }
}
