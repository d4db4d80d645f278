import HeraldEvents

/// Interns the account and chat names of a stream of events to dense ids ahead of the
/// projection, on the thread that decodes the events: a replay of a ``ReplayBatch`` holding
/// their ids then finds an event's account and chat by array index, without hashing a name.
///
/// Accounts get ids 0, 1, 2… in order of first appearance, and each account's chats their
/// own ids 0, 1, 2…. The ids mean something only to the projections that replay this
/// interner's events in the same order: each interner stamps its ids with the token its owner
/// gives it, so a projection that meets ids of another token (or none) resolves the names again.
package struct NameInterner: Sendable {
    /// This interner's token (never 0, which ``InternedNames/none`` carries).
    let token: UInt64
    private var accounts = NameTable()
    /// Per account id, its chats.
    private var chats: [NameTable] = []

    /// Creates an interner with no names yet, whose ids carry `token`.
    ///
    /// - Parameter token: tells this interner's ids from those of any other interner whose
    ///   events the same projection replays; not 0. An owner that cannot count its interners
    ///   draws one at random (`UInt64.random(in: 1...UInt64.max)`).
    package init(token: UInt64) {
        precondition(token != 0, "token 0 stands for no interner")
        self.token = token
    }

    /// The ids of `event`'s account and chat, interning them when new.
    package mutating func names(of event: Event) -> InternedNames {
        let (account, isNew) = accounts.intern(event.account)
        if isNew { chats.append(NameTable()) }
        guard let chat = event.chat else { return InternedNames(token: token, account: Int32(account), chat: -1) }
        return InternedNames(token: token, account: Int32(account), chat: Int32(chats[account].intern(chat).index))
    }

    /// The ids of an event's account and chat given as their UTF-8 bytes (valid UTF-8; no
    /// chat: `nil`), as a decoder reads them from an encoded event (`Event.encodedNames`):
    /// the same ids ``names(of:)`` gives, and a name seen before costs no `String`.
    package mutating func names(account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>?) -> InternedNames {
        let (account, isNew) = accounts.intern(bytes: account)
        if isNew { chats.append(NameTable()) }
        guard let chat else { return InternedNames(token: token, account: Int32(account), chat: -1) }
        let index = chats.withUnsafeMutableBufferPointer { $0[account].intern(bytes: chat).index }
        return InternedNames(token: token, account: Int32(account), chat: Int32(index))
    }

    /// The ids ``names(account:chat:)`` gives for names interned before, interning nothing;
    /// `nil` when either is new. Makes and retains no `String`: for a decoder that needs the
    /// ids alone (a `notify` decoded into a ``PackedNotify``).
    package func knownIds(account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>) -> InternedNames? {
        guard let accountIndex = accounts.index(ofBytes: account) else { return nil }
        return chats.withUnsafeBufferPointer { chats in
            guard let chatIndex = chats[accountIndex].index(ofBytes: chat) else { return nil }
            return InternedNames(token: token, account: Int32(accountIndex), chat: Int32(chatIndex))
        }
    }

    /// ``names(account:chat:)`` for names interned before, interning nothing: their ids and
    /// the names themselves (as first interned), or `nil` when either is new. A decoder that
    /// interned them from an event it decoded takes the names from here instead of making
    /// strings from the bytes again.
    package func knownNames(
        account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>?
    ) -> (ids: InternedNames, account: String, chat: String?)? {
        guard let accountIndex = accounts.index(ofBytes: account) else { return nil }
        let accountName = accounts.names[accountIndex]
        guard let chat else {
            return (InternedNames(token: token, account: Int32(accountIndex), chat: -1), accountName, nil)
        }
        return chats.withUnsafeBufferPointer { chats in
            let table = chats[accountIndex]
            guard let chatIndex = table.index(ofBytes: chat) else { return nil }
            return (InternedNames(token: token, account: Int32(accountIndex), chat: Int32(chatIndex)), accountName, table.names[chatIndex])
        }
    }
}
