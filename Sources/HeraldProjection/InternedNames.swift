/// An event's account and chat as ids of a ``NameInterner`` (see
/// ``Projection/replay(_:seq:names:)``).
public struct InternedNames: Sendable, Hashable {
    /// The token of the interner that gave the ids; 0 for ``none``.
    let token: UInt64
    /// The account's id.
    let account: Int32
    /// The chat's id within its account; -1 when the event names no chat.
    let chat: Int32

    /// No ids: the projection looks the names up itself.
    public static let none = InternedNames(token: 0, account: -1, chat: -1)
}
