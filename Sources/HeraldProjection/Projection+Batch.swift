import Dispatch
import HeraldEvents

/// Something that holds an event: the elements of a batch replay, so that a store can hand
/// over its own records without copying their events out.
package protocol CarriesEvent {
    /// The event held.
    var event: Event { get }
}

extension Event: CarriesEvent {
    package var event: Event { self }
}

extension Projection {
    /// The smallest batch that ``replay(_:through:)`` splits between two threads: below it,
    /// waking the second thread costs more than it saves.
    static let concurrentReplayMinimum = 512

    /// Replays `events` in order, as ``replay(_:seq:)`` would one by one, the last of them
    /// with seq `seq` (the others with smaller, increasing ones). The view is left to settle
    /// as after ``replay(_:seq:)``.
    ///
    /// Accounts are independent, so a large batch that names several accounts is replayed on
    /// two threads, each taking the events of its half of the accounts in log order: the
    /// state is the same as on one thread.
    public mutating func replay(_ events: [Event], through seq: UInt64) {
        replay(records: events, through: seq)
    }

    /// ``replay(_:through:)`` for any records that carry events.
    package mutating func replay<Records: RandomAccessCollection>(records: Records, through seq: UInt64)
    where Records.Element: CarriesEvent {
        guard !records.isEmpty else { return }
        precondition(seq >= self.seq + UInt64(records.count), "events must be applied in increasing seq order")
        guard records.count >= Self.concurrentReplayMinimum,
            let done = records.withContiguousStorageIfAvailable({ replayOnTwoThreads($0) }), done
        else {
            var next = seq - UInt64(records.count)
            for record in records {
                next += 1
                replay(record.event, seq: next)
            }
            return
        }
        self.seq = seq
    }

    /// Replays `records` with each half of their accounts on a thread of its own; returns
    /// false, replaying nothing, when one half would get too small a share to be worth it.
    private mutating func replayOnTwoThreads<Record: CarriesEvent>(_ records: UnsafeBufferPointer<Record>) -> Bool {
        // Interning the accounts is the only step that touches the table of names: it is
        // done first, here, and the threads then work on account indexes.
        let configuration = self.configuration
        var accounts: [Int32] = []
        accounts.reserveCapacity(records.count)
        var odd = 0
        for index in records.indices {
            let account = accountsByName.intern(records[index].event.account) { Account(configuration: configuration) }
            accounts.append(Int32(account))
            odd &+= account & 1
        }
        // Accounts go to threads by the parity of their index.
        let smaller = min(odd, records.count - odd)
        guard smaller * 8 >= records.count else { return false }

        var newlyStale: [[Int]] = [[], []]
        accountsByName.withStates { states in
            accounts.withUnsafeBufferPointer { accounts in
                newlyStale.withUnsafeMutableBufferPointer { newlyStale in
                    let shared = SharedReplay(records: records, accounts: accounts, states: states, newlyStale: newlyStale)
                    DispatchQueue.concurrentPerform(iterations: 2) { half in shared.replay(half: half) }
                }
            }
        }
        staleAccounts.append(contentsOf: newlyStale[0])
        staleAccounts.append(contentsOf: newlyStale[1])
        return true
    }
}

/// What the two threads of a batch replay share.
private struct SharedReplay<Record: CarriesEvent>: @unchecked Sendable {
    // @unchecked: `records` and `accounts` are only read, and stay valid until
    // `concurrentPerform` returns; each thread mutates only the accounts (elements of
    // `states`) of its own parity, which no other code touches meanwhile, and writes only its
    // own slot of `newlyStale`. Two accounts never share mutable storage: their arrays are
    // copied on write like any value's, with atomic reference counts.
    let records: UnsafeBufferPointer<Record>
    let accounts: UnsafeBufferPointer<Int32>
    let states: UnsafeMutableBufferPointer<Account>
    let newlyStale: UnsafeMutableBufferPointer<[Int]>

    /// Replays, in order, the records whose account's index has parity `half`.
    func replay(half: Int) {
        var stale: [Int] = []
        for index in records.indices where Int(accounts[index]) & 1 == half {
            let account = Int(accounts[index])
            let wasStale = states[account].viewIsStale
            _ = states[account].apply(records[index].event.payload, computeUpdates: false)
            if states[account].recording { states[account].changes.removeAll() }
            if states[account].viewIsStale && !wasStale { stale.append(account) }
            #if DEBUG
            states[account].checkInvariants()
            #endif
        }
        newlyStale[half] = stale
    }
}
