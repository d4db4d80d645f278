import Crypto

/// Derives object ids for payloads whose ecosystem has no positive 64-bit id.
///
/// The id is the first 8 bytes of SHA-256 of the input, read big-endian, with the top bit
/// cleared so it is a non-negative `Int64`; the one-in-2⁶³ result 0 becomes 1. The same input
/// always gives the same id, so a redelivered payload maps to the same object identity.
enum StableID {
    /// The id of a string identifier, such as a Matrix event id (its UTF-8 bytes are hashed).
    static func of(_ text: String) -> Int64 { of(bytes: Array(text.utf8)) }

    /// The id of raw bytes, such as a whole APNs payload with no id field.
    static func of(bytes: some Collection<UInt8>) -> Int64 {
        let digest = Array(SHA256.hash(data: Array(bytes)))
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        let id = Int64(bitPattern: value & 0x7FFF_FFFF_FFFF_FFFF)
        return id == 0 ? 1 : id
    }
}
