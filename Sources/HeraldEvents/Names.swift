/// Account and chat names are opaque: two names are the same only when their UTF-8 bytes are
/// (SEMANTICS 1.1 §2). Swift's `String ==` and `String` hashing compare by Unicode canonical
/// equivalence, which would merge `é` written precomposed with `e` plus a combining accent,
/// so code that filters, groups or deletes by name uses these instead.
extension String {
    /// Whether `self` and `other` are the same account or chat name: the same UTF-8 bytes.
    @inlinable
    public func isSameName(as other: String) -> Bool {
        utf8.elementsEqual(other.utf8)
    }
}

/// A name as a dictionary or set key, equal and hashed by its UTF-8 bytes (SEMANTICS 1.1 §2).
public struct NameKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name.
    public let name: String

    /// Wraps `name`.
    public init(_ name: String) { self.name = name }

    public static func == (lhs: NameKey, rhs: NameKey) -> Bool { lhs.name.isSameName(as: rhs.name) }

    /// Byte (UTF-8) order, the order of every listing.
    public static func < (lhs: NameKey, rhs: NameKey) -> Bool {
        lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)  // no name's UTF-8 holds 0xFF: ends the name
    }

    public var description: String { name }
}
