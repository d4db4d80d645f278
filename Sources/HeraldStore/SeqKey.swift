/// The key of a log record (and of a snapshot): a sequence number as 8 big-endian bytes, so
/// LMDB's default byte-wise key order is numeric order and appends can use `MDB_APPEND`.
package struct SeqKey: Hashable, Sendable, Comparable {
    /// The sequence number, from 1.
    package var seq: UInt64

    /// The largest seq a record may have (2^63 − 1): the store counts on from the last seq,
    /// and JSON readers hold integers as signed 64-bit numbers at most.
    package static let maximum = UInt64(Int64.max)

    /// Creates the key of `seq`.
    package init(_ seq: UInt64) { self.seq = seq }

    /// The 8 key bytes.
    package var bytes: [UInt8] {
        withUnsafeBytes(of: seq.bigEndian) { Array($0) }
    }

    /// Calls `body` with the 8 key bytes, without allocating.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: seq.bigEndian, body)
    }

    /// Decodes a key; `nil` unless it is exactly 8 bytes.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 8 else { return nil }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        self.seq = value
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.seq < rhs.seq }
}
