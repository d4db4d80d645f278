import HeraldEvents

/// The stored form of a snapshot: the projection's snapshot bytes wrapped with the seq they
/// cover and a CRC-32C, so a damaged or foreign value is recognised before it is decoded.
/// `schema/snapshot-format.md` documents every byte.
///
/// | field | encoding |
/// |---|---|
/// | magic | `HSNP` (4 ASCII bytes) |
/// | version | u8, `1` |
/// | seq | u64be: the snapshot covers every event with seq ≤ this |
/// | length | u64be: the payload's byte count |
/// | payload | the bytes of `Projection.snapshot()` |
/// | checksum | u32be: CRC-32C of every preceding byte |
package struct SnapshotEnvelope: Hashable, Sendable {
    /// The seq the snapshot covers: every event with a seq up to this one is in it.
    package var seq: UInt64
    /// The projection's snapshot bytes (`Projection.snapshot()`).
    package var payload: [UInt8]

    /// The envelope version this build writes and reads.
    package static let version: UInt8 = 1
    /// The four bytes every envelope starts with.
    package static let magic: [UInt8] = Array("HSNP".utf8)
    /// Bytes around the payload: magic, version, seq, length, checksum.
    static let overhead = 4 + 1 + 8 + 8 + 4

    /// Creates an envelope.
    package init(seq: UInt64, payload: [UInt8]) {
        self.seq = seq
        self.payload = payload
    }

    /// Why stored bytes are not a usable snapshot envelope.
    package struct Damage: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, in words.
        package var reason: String
        /// Whether the bytes are intact but of a version this build does not know.
        package var isUnknownVersion = false
        package var description: String { reason }
    }

    /// The encoded envelope.
    package var encoded: [UInt8] {
        var writer = ByteWriter(capacity: payload.count + Self.overhead)
        writer.append(contentsOf: Self.magic)
        writer.byte(Self.version)
        writer.uint64BigEndian(seq)
        writer.uint64BigEndian(UInt64(payload.count))
        writer.append(contentsOf: payload)
        writer.uint32BigEndian(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    /// Checks and decodes stored bytes: magic, version, checksum, length and, when given,
    /// that the seq matches the key it was stored under.
    package init(bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil) throws(Damage) {
        let (seq, payload) = try Self.check(bytes, expectedSeq: expectedSeq)
        self.seq = seq
        self.payload = Array(bytes[payload])
    }

    /// Checks stored bytes like ``init(bytes:expectedSeq:)`` without copying the payload;
    /// returns the seq and where the payload lies in `bytes`.
    package static func check(
        _ bytes: UnsafeRawBufferPointer, expectedSeq: UInt64? = nil
    ) throws(Damage) -> (seq: UInt64, payload: Range<Int>) {
        guard bytes.count >= overhead else {
            throw Damage(reason: "snapshot of \(bytes.count) bytes is too short")
        }
        guard bytes.prefix(4).elementsEqual(magic) else { throw Damage(reason: "not a snapshot envelope (bad magic)") }
        guard bytes[4] == version else {
            throw Damage(reason: "unknown snapshot envelope version \(bytes[4])", isUnknownVersion: true)
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)])
        var stored: UInt32 = 0
        for byte in bytes[(bytes.count - 4)...] { stored = stored << 8 | UInt32(byte) }
        guard CRC32C.checksum(body) == stored else { throw Damage(reason: "snapshot checksum mismatch") }
        var seq: UInt64 = 0
        var length: UInt64 = 0
        for byte in bytes[5..<13] { seq = seq << 8 | UInt64(byte) }
        for byte in bytes[13..<21] { length = length << 8 | UInt64(byte) }
        let payloadStart = 21
        guard length == UInt64(body.count - payloadStart) else {
            throw Damage(reason: "payload length \(length) but \(body.count - payloadStart) bytes follow")
        }
        if let expectedSeq, expectedSeq != seq {
            throw Damage(reason: "snapshot stored under seq \(expectedSeq) says it covers seq \(seq)")
        }
        return (seq, payloadStart..<body.count)
    }
}
