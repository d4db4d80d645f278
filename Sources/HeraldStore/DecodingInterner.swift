import HeraldProjection

/// The ``NameInterner`` of one decoding run, shared by reference with the `@Sendable`
/// closure that decodes the records.
final class DecodingInterner: @unchecked Sendable {
    // @unchecked: `interner` is used by one thread at a time: the decoding closure runs on
    // the pipeline's producer thread, or on the caller's when the run is too short for a
    // pipeline, never on both, and the run ends before the caller reads anything it made.
    // Held through a pointer, not in a stored `var`: each access to a class's `var` is
    // checked for exclusivity at run time (`swift_beginAccess`, ~75 instructions a record).
    private let interner: UnsafeMutablePointer<NameInterner>

    init() {
        interner = .allocate(capacity: 1)
        // A random token: the store cannot count the interners of every projection it feeds.
        interner.initialize(to: NameInterner(token: .random(in: 1...UInt64.max)))
    }

    deinit {
        interner.deinitialize(count: 1)
        interner.deallocate()
    }

    /// Calls `body` with the interner lent in place. Reading it through `pointee` for a
    /// non-mutating call made the compiler copy it, retaining and releasing its three tables
    /// around every lookup (~130 instructions a record); an exclusive (`inout`) access lends it.
    @inline(__always)
    private static func lend<Result>(
        _ interner: UnsafeMutablePointer<NameInterner>, _ body: (inout NameInterner) -> Result
    ) -> Result {
        body(&interner.pointee)
    }

    /// The ids of an event's account and chat, from their bytes
    /// (``NameInterner/names(account:chat:)``).
    func names(account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>?) -> InternedNames {
        interner.pointee.names(account: account, chat: chat)
    }

    /// The ids and names of an event's account and chat when both were interned before
    /// (``NameInterner/knownNames(account:chat:)``); `nil` otherwise.
    func knownNames(
        account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>?
    ) -> (ids: InternedNames, account: String, chat: String?)? {
        Self.lend(interner) { $0.knownNames(account: account, chat: chat) }
    }

    /// The ids of a `notify` event's account and chat when both were interned before
    /// (``NameInterner/knownIds(account:chat:)``); `nil` otherwise.
    func knownIds(account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>) -> InternedNames? {
        Self.lend(interner) { $0.knownIds(account: account, chat: chat) }
    }
}
