import HeraldEvents

/// Events lent in place inside the elements of a contiguous buffer (the elements may be
/// records that hold an event among other fields): what batch replays read, so that a store
/// can hand over its records without copying their events out, and the two threads of a
/// batch replay can read them at once.
package struct LentEvents: @unchecked Sendable {
    // @unchecked: the events are only read, and the owner keeps them alive and unchanged for
    // as long as the value is used (a call's duration).
    private let base: UnsafeRawPointer?
    private let stride: Int
    /// How many events.
    package let count: Int

    /// The events held at byte `offset` of each element of `elements`.
    package init<Element>(_ elements: UnsafeBufferPointer<Element>, eventAt offset: Int) {
        base = elements.baseAddress.map { UnsafeRawPointer($0) + offset }
        stride = MemoryLayout<Element>.stride
        count = elements.count
    }

    /// The events of `events`.
    package init(_ events: UnsafeBufferPointer<Event>) {
        self.init(events, eventAt: 0)
    }

    /// Event `index`, in place.
    @inline(__always)
    package subscript(index: Int) -> UnsafePointer<Event> {
        (base.unsafelyUnwrapped + index * stride).assumingMemoryBound(to: Event.self)
    }
}

extension Projection {
    /// Runs the two halves of a splittable piece of work (``replay(_:through:inHalves:)``,
    /// ``init(snapshot:configuration:checksumVerified:onlyAccount:readingFormerFormats:inHalves:)``):
    /// calls `half` with 0 and with 1, on two threads at once or one after the other, and
    /// returns once both have returned. The projection starts no thread of its own: the
    /// store's recovery passes a runner that does.
    package typealias HalvesRunner = (_ half: @Sendable (Int) -> Void) -> Void

    /// The smallest batch that ``replay(_:through:inHalves:)`` splits in two: below it,
    /// waking a second thread costs more than it saves.
    static let splitReplayMinimum = 512

    /// Replays `events` in order, as ``replay(_:seq:)`` would one by one, the last of them
    /// with seq `seq` (the others with smaller, increasing ones). The view is left to settle
    /// as after ``replay(_:seq:)``.
    public mutating func replay(_ events: [Event], through seq: UInt64) {
        events.withUnsafeBufferPointer { replay(LentEvents($0), through: seq) }
    }

    /// ``replay(_:through:)`` for events lent in place. Accounts are independent, so with
    /// `runHalves`, a large batch that names several accounts is replayed in two halves of
    /// its accounts, each taking its accounts' events in log order, which `runHalves` may
    /// run on two threads at once: the state is the same as in one run.
    package mutating func replay(_ events: LentEvents, through seq: UInt64, inHalves runHalves: HalvesRunner? = nil) {
        guard events.count > 0 else { return }
        precondition(seq >= self.seq + UInt64(events.count), "events must be applied in increasing seq order")
        guard let runHalves, events.count >= Self.splitReplayMinimum, replayInHalves(events, runHalves) else {
            var next = seq - UInt64(events.count)
            for index in 0..<events.count {
                next += 1
                replay(events[index].pointee, seq: next)
            }
            return
        }
        self.seq = seq
    }

    /// Replays `events` in two halves of their accounts, run by `runHalves`; returns false,
    /// replaying nothing, when one half would get too small a share to be worth it.
    private mutating func replayInHalves(_ events: LentEvents, _ runHalves: HalvesRunner) -> Bool {
        // Interning the accounts is the only step that touches the table of names: it is
        // done first, here, and the halves then work on account indexes.
        let configuration = self.configuration
        var accounts: [Int32] = []
        accounts.reserveCapacity(events.count)
        var odd = 0
        for index in 0..<events.count {
            let account = accountsByName.intern(events[index].pointee.account) { Account(configuration: configuration) }
            accounts.append(Int32(account))
            odd &+= account & 1
        }
        // Accounts go to threads by the parity of their index.
        let smaller = min(odd, events.count - odd)
        guard smaller * 8 >= events.count else { return false }

        var newlyStale: [[Int]] = [[], []]
        if accountsByName.states.count > internedChats.count { addInternedChats(through: accountsByName.states.count - 1) }
        accountsByName.withStates { states in
            accounts.withUnsafeBufferPointer { accounts in
                newlyStale.withUnsafeMutableBufferPointer { newlyStale in
                    internedChats.withUnsafeMutableBufferPointer { chatIds in
                        let shared = SharedReplay(
                            events: events, accounts: accounts, states: states, chatIds: chatIds, newlyStale: newlyStale)
                        runHalves { half in shared.replay(half: half) }
                    }
                }
            }
        }
        staleAccounts.append(contentsOf: newlyStale[0])
        staleAccounts.append(contentsOf: newlyStale[1])
        return true
    }
}

/// What the two halves of a batch replay share.
private struct SharedReplay: @unchecked Sendable {
    // @unchecked: `events` and `accounts` are only read, and stay valid until the runner
    // returns; each half mutates only the accounts (elements of `states`) of its own parity,
    // which no other code touches meanwhile, and writes only its own slot of `newlyStale`;
    // the same holds for `chatIds`. Two accounts never share mutable storage: their arrays are
    // copied on write like any value's, with atomic reference counts.
    let events: LentEvents
    let accounts: UnsafeBufferPointer<Int32>
    let states: UnsafeMutableBufferPointer<Account>
    /// Each account's cache of interned chat ids (a `revoke` empties it).
    let chatIds: UnsafeMutableBufferPointer<InternedIndexes>
    let newlyStale: UnsafeMutableBufferPointer<[Int]>

    /// Replays, in order, the records whose account's index has parity `half`.
    func replay(half: Int) {
        var stale: [Int] = []
        var scratch = EventScratch()
        for index in accounts.indices where Int(accounts[index]) & 1 == half {
            let account = Int(accounts[index])
            if states[account].replay(events[index].pointee.payload, chatIds: &chatIds[account], &scratch) { stale.append(account) }
        }
        newlyStale[half] = stale
    }
}
