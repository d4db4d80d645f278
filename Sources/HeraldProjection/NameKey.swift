/// An account or chat name as a dictionary key: compared byte for byte and hashed once with
/// a cheap byte hash (FNV-1a), so lookups skip `String`'s Unicode-aware hashing.
///
/// Names are opaque (SEMANTICS §2): two names are the same name only when their UTF-8 bytes
/// are, which is also the order every listing uses.
struct NameKey: Hashable, Sendable {
    /// The name.
    let name: String
    /// FNV-1a of the name's UTF-8 bytes.
    let byteHash: UInt64

    /// Creates the key of `name`.
    @inline(__always)
    init(_ name: String) {
        self.name = name
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        if let fast = name.utf8.withContiguousStorageIfAvailable({ bytes -> UInt64 in
            var h = hash
            for byte in bytes {
                h ^= UInt64(byte)
                h &*= 0x0000_0100_0000_01b3
            }
            return h
        }) {
            hash = fast
        } else {
            for byte in name.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        byteHash = hash
    }

    @inline(__always)
    func hash(into hasher: inout Hasher) {
        hasher.combine(byteHash)
    }

    @inline(__always)
    static func == (lhs: NameKey, rhs: NameKey) -> Bool {
        lhs.byteHash == rhs.byteHash && lhs.name.utf8.elementsEqual(rhs.name.utf8)
    }
}
