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
        accountsByName.modify(at: index) { state in
            if state.replay(notify, names: names, chat: chat) { staleAccounts.append(index) }
        }
    }
}

extension Account {
    /// ``replay(_:names:)`` of a `notify` event given as a ``PackedNotify``, whose chat's
    /// name is the UTF-8 bytes `chat` (read only when `names`' chat id is not known here).
    mutating func replay(_ notify: PackedNotify, names: InternedNames, chat: UnsafeBufferPointer<UInt8>) -> Bool {
        let wasStale = viewIsStale
        savesShownBefore = false
        let known = internedChats.index(of: names.chat, token: names.token)
        self.notify(notify, chat: known >= 0 ? known : intern(chat: String(decoding: chat, as: UTF8.self), names))
        _ = deferView()
        savesShownBefore = true
        if recording { changes.removeAll() }
        #if DEBUG
        checkInvariants()
        #endif
        return viewIsStale && !wasStale
    }
}
