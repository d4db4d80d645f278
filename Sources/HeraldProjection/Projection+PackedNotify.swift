import HeraldEvents

extension Projection {
    /// ``replay(_:seq:names:)`` of a `notify` event given as a ``PackedNotify``: the state ends
    /// exactly as with the ``Event`` it was decoded from. `account` and `chat` are the UTF-8
    /// bytes of its names, read only when the projection has not met `names`' ids yet (then
    /// it resolves them as ``replay(_:seq:names:)`` does).
    package mutating func replay(
        _ notify: PackedNotify, seq: UInt64, names: InternedNames, account: UnsafeBufferPointer<UInt8>,
        chat: UnsafeBufferPointer<UInt8>
    ) {
        precondition(seq > self.seq, "events must be applied in increasing seq order")
        self.seq = seq
        let index = accountIndex(names: names, name: String(decoding: account, as: UTF8.self))
        if index >= internedChats.count { addInternedChats(through: index) }
        let becameStale = accountsByName.modify(at: index, &internedChats[index], &scratch) { state, chatIds, scratch in
            state.replay(notify, names: names, chat: chat, chatIds: &chatIds, &scratch)
        }
        if becameStale { staleAccounts.append(index) }
    }
}

extension Account {
    /// ``replay(_:names:)`` of a `notify` event given as a ``PackedNotify``, whose chat's
    /// name is the UTF-8 bytes `chat` (read only when `names`' chat id is not known here).
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
