/// Appends the primitives of Herald's binary encodings (log records, snapshots) to a buffer.
///
/// Unsigned integers are LEB128 varints, signed ones are zigzag varints, strings are a varint
/// byte length followed by UTF-8, fixed-width integers are big-endian.
package struct ByteWriter: Sendable {
    /// The bytes written so far.
    package var bytes: [UInt8]

    /// Creates a writer with room for `capacity` bytes.
    package init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Appends an unsigned LEB128 varint (1 to 10 bytes).
    package mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Appends a signed integer as a zigzag varint, so small magnitudes stay short.
    package mutating func signedVarint(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a varint byte length, then the UTF-8 bytes of `value`.
    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// Appends a string given as its UTF-8 bytes, as ``string(_:)`` writes it.
    package mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Appends `value` as 8 big-endian bytes.
    package mutating func uint64BigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` as 4 big-endian bytes.
    package mutating func uint32BigEndian(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(contentsOf other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}
