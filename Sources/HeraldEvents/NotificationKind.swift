/// What kind of object a `notify` or `edit` names (SEMANTICS §1).
public enum NotificationKind: String, CaseIterable, Hashable, Sendable {
    case message, mention, pinned, reaction, call, secretChat

    /// The identity class of the object (SEMANTICS §2): message, mention and pinned share `msg`.
    public var objectClass: ObjectClass {
        switch self {
        case .message, .mention, .pinned: .msg
        case .reaction: .reaction
        case .call: .call
        case .secretChat: .secretChat
        }
    }
}

/// The identity class of an object: inside an account, `(chat, class, id)` names one object.
public enum ObjectClass: UInt8, CaseIterable, Hashable, Sendable, Comparable {
    case msg, reaction, call, secretChat

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
