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
        interner.initialize(to: NameInterner())
    }

    deinit {
        interner.deinitialize(count: 1)
        interner.deallocate()
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
        interner.pointee.knownNames(account: account, chat: chat)
    }

    /// The ids of a `notify` event's account and chat when both were interned before
    /// (``NameInterner/knownIds(account:chat:)``); `nil` otherwise.
    func knownIds(account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>) -> InternedNames? {
        interner.pointee.knownIds(account: account, chat: chat)
    }

    /// The names of ids this interner gave (``NameInterner/names(ids:)``).
    func knownNames(ids: InternedNames) -> (account: String, chat: String?) {
        interner.pointee.names(ids: ids)
    }
}
