import HeraldEvents

extension Projection {
    /// Runs the two halves of a splittable piece of work (a ``ReplayBatch`` of lent events,
    /// ``init(snapshot:configuration:checksumVerified:onlyAccount:readingFormerFormats:inHalves:)``):
    /// calls `half` with 0 and with 1, on two threads at once or one after the other, and
    /// returns once both have returned. The projection starts no thread of its own: the
    /// store's recovery passes a runner that does.
    package typealias HalvesRunner = (_ half: @Sendable (Int) -> Void) -> Void

    /// The smallest batch of lent events that is replayed in two halves: below it, waking a
    /// second thread costs more than it saves.
    static let splitReplayMinimum = 512

    /// Applies the events of `batch` in order without computing their updates or changes:
    /// the state ends exactly as with ``apply(_:seq:)`` of each, faster. For recovery,
    /// rebuilds and what-if replays, where only the final state matters.
    ///
    /// Which groups are visible is worked out once, when the projection is next read (or
    /// applies an event), rather than after every replayed event; call ``settleView()`` after
    /// a run of replays to do it then, in place, instead of on a copy at each read.
    ///
    /// The batch's first seq must be greater than ``seq``.
    public mutating func replay(_ batch: ReplayBatch) {
        if let lent = batch.lent {
            replay(lent, through: batch.lentThrough, inHalves: batch.runHalves)
            return
        }
        batch.entries.withUnsafeBufferPointer { entries in
            batch.events.withUnsafeBufferPointer { events in
                batch.bytes.withUnsafeBytes { bytes in
                    var nextEvent = 0
                    for index in entries.indices {
                        let entry = entries.baseAddress.unsafelyUnwrapped + index
                        if entry.pointee.kind == nil {
                            replay(events[nextEvent], seq: entry.pointee.seq, names: entry.pointee.names)
                            nextEvent += 1
                        } else {
                            replayPacked(entry, bytes: bytes.baseAddress.unsafelyUnwrapped)
                        }
                    }
                }
            }
        }
    }

    /// Replays the `notify` of `entry`, whose names, title and texts are in `bytes`: the
    /// state ends exactly as with the ``Event`` it was decoded from. Its names' bytes are
    /// read only when the projection has not met their ids yet.
    @inline(__always)
    private mutating func replayPacked(_ entry: UnsafePointer<ReplayBatch.Entry>, bytes: UnsafeRawPointer) {
        let entry = entry.pointee
        let account = bytes + Int(entry.start)
        let chat = account + Int(entry.accountLength)
        let texts = chat + Int(entry.chatLength)
        let textsCount = (entry.titleLength == .max ? 0 : Int(entry.titleLength)) + Int(entry.textsLength)
        let notify = PackedNotify(
            kind: entry.kind.unsafelyUnwrapped, id: entry.id, date: entry.date, silent: entry.silent, partial: entry.partial,
            unreadOnly: entry.unreadOnly, textBytes: UnsafeRawBufferPointer(start: texts, count: textsCount),
            titleLength: entry.titleLength)
        let accountBytes = UnsafeBufferPointer(start: account.assumingMemoryBound(to: UInt8.self), count: Int(entry.accountLength))
        let chatBytes = UnsafeBufferPointer(start: chat.assumingMemoryBound(to: UInt8.self), count: Int(entry.chatLength))
        precondition(entry.seq > self.seq, "events must be applied in increasing seq order")
        self.seq = entry.seq
        let index = accountIndex(names: entry.names, name: String(decoding: accountBytes, as: UTF8.self))
        if index >= internedChats.count { addInternedChats(through: index) }
        let becameStale = accountsByName.modify(at: index, &internedChats[index], &scratch) { state, chatIds, scratch in
            state.replay(notify, names: entry.names, chat: chatBytes, chatIds: &chatIds, &scratch)
        }
        if becameStale { staleAccounts.append(index) }
    }

    /// Replays lent `events`, the last with seq `seq`. Accounts are independent, so with
    /// `runHalves`, a large batch that names several accounts is replayed in two halves of
    /// its accounts, each taking its accounts' events in log order, which `runHalves` may
    /// run on two threads at once: the state is the same as in one run.
    private mutating func replay(_ events: LentEvents, through seq: UInt64, inHalves runHalves: HalvesRunner?) {
        guard events.count > 0 else { return }
        precondition(seq >= self.seq + UInt64(events.count), "events must be applied in increasing seq order")
        guard let runHalves, events.count >= Self.splitReplayMinimum, replayInHalves(events, runHalves) else {
            var next = seq - UInt64(events.count)
            for index in 0..<events.count {
                next += 1
                replay(events[index].pointee, seq: next, names: .none)
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

extension Account {
    /// ``replay(_:names:chatIds:_:)`` of a `notify` event given as a ``PackedNotify``, whose
    /// chat's name is the UTF-8 bytes `chat` (read only when `names`' chat id is not known here).
    mutating func replay(
        _ notify: PackedNotify, names: InternedNames, chat: UnsafeBufferPointer<UInt8>, chatIds: inout InternedIndexes,
        _ scratch: inout EventScratch
    ) -> Bool {
        let wasStale = viewIsStale
        scratch.savesShownBefore = false
        let known = chatIds.index(of: names.chat, token: names.token)
        self.notify(
            notify, chat: known >= 0 ? known : intern(chat: String(decoding: chat, as: UTF8.self), names, &chatIds), &scratch)
        _ = deferView(&scratch)
        scratch.savesShownBefore = true
        if recording { scratch.changes.removeAll() }
        #if DEBUG
        checkInvariants()
        #endif
        return viewIsStale && !wasStale
    }
}
