/// Reads the primitives written by ``ByteWriter`` from borrowed bytes, never trusting them:
/// every read checks bounds and throws ``MalformedBytes`` instead of trapping.
package struct ByteReader {
    // The small reads are inlinable, so that other modules' decoders (a log record's
    // header) inline them as this module's do.
    @usableFromInline let buffer: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    @usableFromInline var position: Int = 0

    /// The offset of the next byte to read.
    @inlinable package var offset: Int { position }

    /// Why bytes could not be decoded, and at which offset.
    package typealias Malformed = MalformedBytes

    /// Reads from `buffer`, which must stay valid while the reader is used.
    package init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    /// The number of bytes not read yet.
    @inlinable package var remaining: Int { buffer.count - offset }

    /// Whether every byte has been read.
    @inlinable package var isAtEnd: Bool { offset == buffer.count }

    @inlinable @inline(__always)
    package mutating func byte() throws(Malformed) -> UInt8 {
        let at = offset
        guard at < buffer.count else { throw Self.unexpectedEnd(at: at) }
        position = at + 1
        return buffer.load(fromByteOffset: at, as: UInt8.self)
    }

    /// The error for bytes that end at `offset` in the middle of a value, for every read (out
    /// of line: it is the cold path of the small reads inlined at every call).
    @usableFromInline @inline(never)
    static func unexpectedEnd(at offset: Int) -> Malformed {
        Malformed(offset: offset, reason: "unexpected end")
    }

    @inlinable @inline(__always)
    package mutating func varint() throws(Malformed) -> UInt64 {
        // Most varints are one byte (lengths, counts, flags): that case reads and returns.
        let start = offset
        guard start < buffer.count else { throw Self.unexpectedEnd(at: start) }
        let first = buffer.load(fromByteOffset: start, as: UInt8.self)
        if first < 0x80 {
            position = start + 1
            return UInt64(first)
        }
        return try longVarint(first: first, at: start)
    }

    /// Passes over a varint without decoding it; throws where ``varint()`` throws.
    @inlinable @inline(__always)
    package mutating func skipVarint() throws(Malformed) {
        let start = position
        if buffer.count &- start >= 8 {
            // The first eight bytes hold its last byte (the first without its high bit):
            // a varint of at most eight bytes, which cannot overflow.
            let word = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            let ends = ~word & 0x8080_8080_8080_8080
            if ends != 0 {
                position = start &+ ((ends.trailingZeroBitCount &+ 1) >> 3)
                return
            }
        }
        _ = try varint()
    }

    /// The rest of a varint of more than one byte, whose first byte `first` is at `start`.
    @usableFromInline
    mutating func longVarint(first: UInt8, at start: Int) throws(Malformed) -> UInt64 {
        if buffer.count - start >= 8 {
            // Eight bytes at once: find the last byte (the first without its high bit), keep
            // the bytes up to it, and pack their 7-bit groups together in three steps.
            let word = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            let ends = ~word & 0x8080_8080_8080_8080
            if ends != 0 {
                let length = (ends.trailingZeroBitCount + 1) >> 3
                var x = (length == 8 ? word : word & ((1 << UInt64(length << 3)) - 1)) & 0x7F7F_7F7F_7F7F_7F7F
                x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1)
                x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2)
                x = (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4)
                position = start + length
                return x
            }
        }
        var result = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        var index = start + 1
        let end = buffer.count
        while index < end {
            let b = buffer.load(fromByteOffset: index, as: UInt8.self)
            index += 1
            if shift == 63 && b > 1 { throw Malformed(offset: start, reason: "varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 {
                position = index
                return result
            }
            shift += 7
        }
        position = end
        throw Self.unexpectedEnd(at: end)
    }

    package mutating func signedVarint() throws(Malformed) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Reads a varint that must fit in `0...limit`, e.g. a count or a length.
    package mutating func count(limit: Int) throws(Malformed) -> Int {
        let start = offset
        let raw = try varint()
        guard raw <= UInt64(limit) else { throw Malformed(offset: start, reason: "count \(raw) exceeds \(limit)") }
        return Int(raw)
    }

    /// Reads a length-prefixed UTF-8 string, rejecting invalid UTF-8.
    package mutating func string() throws(Malformed) -> String {
        let start = offset
        let slice = try utf8Slice()
        if Self.isASCII(slice) { return Self.asciiString(slice) }
        guard let value = String(validating: slice, as: UTF8.self) else {
            position = start
            throw Malformed(offset: start, reason: "invalid UTF-8")
        }
        return value
    }

    /// The `String` of bytes ``utf8()`` returned (valid UTF-8).
    static func string(validUTF8 bytes: UnsafeBufferPointer<UInt8>) -> String {
        isASCII(bytes) ? asciiString(bytes) : String(decoding: bytes, as: UTF8.self)
    }

    /// The `String` of bytes all below 0x80. Every such byte is valid UTF-8 on its own:
    /// `String(decoding:as:)` would validate and repair them all the same; this initializer
    /// takes a cheaper path, and builds a short string in place.
    @inline(__always)
    static func asciiString(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            _ = buffer.initialize(fromContentsOf: bytes)
            return bytes.count
        }
    }

    /// Reads a length-prefixed UTF-8 string's bytes, validated but not copied: they are
    /// borrowed from the reader's buffer and valid as long as it is.
    package mutating func utf8() throws(Malformed) -> UnsafeBufferPointer<UInt8> {
        let start = offset
        let slice = try utf8Slice()
        guard Self.isASCII(slice) || String(validating: slice, as: UTF8.self) != nil else {
            position = start
            throw Malformed(offset: start, reason: "invalid UTF-8")
        }
        return slice
    }

    /// Reads a length-prefixed run of bytes without checking them.
    @inlinable @inline(__always)
    mutating func utf8Slice() throws(Malformed) -> UnsafeBufferPointer<UInt8> {
        let length = try stringLength()
        // In bounds (checked by `stringLength`), and a varint was read, so there is a base.
        let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress.unsafelyUnwrapped + position, count: length)
        position &+= length
        return bytes.bindMemory(to: UInt8.self)
    }

    /// Reads the length prefix of a string and checks that its bytes are all there.
    @inlinable @inline(__always)
    mutating func stringLength() throws(Malformed) -> Int {
        let start = position
        let raw = try varint()
        guard raw <= UInt64(buffer.count &- position) else { throw Self.overrun(raw, at: start) }
        return Int(truncatingIfNeeded: raw)
    }

    /// The error for a string longer than the bytes left (out of line, as ``unexpectedEnd(at:)``).
    @usableFromInline @inline(never)
    static func overrun(_ length: UInt64, at offset: Int) -> Malformed {
        Malformed(offset: offset, reason: "string of \(length) bytes overruns the buffer")
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Passes over `count` bytes.
    @inlinable
    package mutating func skip(_ count: Int) throws(Malformed) {
        guard count >= 0, count <= remaining else { throw Self.unexpectedEnd(at: offset) }
        position += count
    }

    /// Passes over a length-prefixed string without decoding it.
    @inlinable @inline(__always)
    package mutating func skipString() throws(Malformed) {
        position &+= try stringLength()
    }

    /// Reads a length-prefixed string's bytes without validating them, borrowed from the
    /// reader's buffer: for bytes already decoded (and validated) once.
    @inlinable @inline(__always)
    package mutating func unvalidatedUTF8() throws(Malformed) -> UnsafeBufferPointer<UInt8> {
        try utf8Slice()
    }

    package mutating func bytes(_ count: Int) throws(Malformed) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw Self.unexpectedEnd(at: offset) }
        defer { position += count }
        return Array(buffer[offset..<(offset + count)])
    }

    package mutating func uint64BigEndian() throws(Malformed) -> UInt64 {
        guard remaining >= 8 else { throw Self.unexpectedEnd(at: offset) }
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(buffer[offset]); position += 1 }
        return value
    }

    package mutating func uint32BigEndian() throws(Malformed) -> UInt32 {
        guard remaining >= 4 else { throw Self.unexpectedEnd(at: offset) }
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(buffer[offset]); position += 1 }
        return value
    }
}

/// Why bytes (a binary event, ``Event/init(binary:)``) could not be decoded, and at which
/// offset.
public struct MalformedBytes: Error, Hashable, Sendable, CustomStringConvertible {
    /// The offset of the byte at fault.
    public var offset: Int
    /// What is wrong, in a few words.
    public var reason: String

    /// Creates an error for the byte at `offset`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}
