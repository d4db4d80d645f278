import HeraldEvents

extension Projection {
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
                            replay(PackedNotify(entry: entry.pointee, bytes: bytes.baseAddress.unsafelyUnwrapped))
                        }
                    }
                }
            }
        }
    }

    /// Replays a packed `notify`: the state ends exactly as with the ``Event`` it was decoded
    /// from. Its names' bytes are read only when the projection has not met their ids yet.
    @inline(__always)
    private mutating func replay(_ notify: PackedNotify) {
        let names = notify.entry.names
        precondition(notify.entry.seq > self.seq, "events must be applied in increasing seq order")
        self.seq = notify.entry.seq
        let index = accountIndex(names: names, name: String(decoding: notify.account, as: UTF8.self))
        if index >= internedChats.count { addInternedChats(through: index) }
        let becameStale = accountsByName.modify(at: index, &internedChats[index], &scratch) { state, chatIds, scratch in
            state.replay(notify, chatIds: &chatIds, &scratch)
        }
        if becameStale { staleAccounts.append(index) }
    }
}

extension Account {
    /// ``replay(_:names:chatIds:_:)`` of a packed `notify`, whose chat's name is read only
    /// when its interned id is not known here.
    mutating func replay(_ notify: PackedNotify, chatIds: inout InternedIndexes, _ scratch: inout EventScratch) -> Bool {
        let wasStale = viewIsStale
        scratch.savesShownBefore = false
        let names = notify.entry.names
        let known = chatIds.index(of: names.chat, token: names.token)
        self.notify(
            notify, chat: known >= 0 ? known : intern(chat: String(decoding: notify.chat, as: UTF8.self), names, &chatIds),
            &scratch)
        _ = deferView(&scratch)
        scratch.savesShownBefore = true
        if recording { scratch.changes.removeAll() }
        #if DEBUG
        checkInvariants()
        #endif
        return viewIsStale && !wasStale
    }
}
