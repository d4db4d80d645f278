import HeraldEvents
import HeraldProjection

/// The value bytes of a log record; `schema/log-format.md` documents every byte.
extension LogRecord {
    /// The newest record format version, written for events that need it
    /// (``formatVersion(of:)``); a reader reads every version from 1 to this one.
    ///
    /// Version 2 (SEMANTICS 1.2) holds events in the binary encoding's version 2 (new tags,
    /// the notify flag `unreadOnly`, a chatSettings mute date). A record whose event the first
    /// encoding can hold is still written as version 1, byte for byte as before 1.2, so a
    /// reader from before 1.2 refuses exactly the records it cannot read, by their version,
    /// and never misreads one.
    package static let formatVersion: UInt8 = 2

    /// The record format version of a record holding `event`: the oldest that can hold it.
    package static func formatVersion(of event: Event) -> UInt8 {
        event.binaryVersionRequired
    }

    private static let hasDigest: UInt8 = 1

    /// Appends the encoded record (without its key) to `writer`.
    static func encode(event: Event, recordedAt: Int64, source: Source, into writer: inout ByteWriter) {
        let start = writer.bytes.count
        writer.byte(formatVersion(of: event))
        writer.byte(source.digest == nil ? 0 : hasDigest)
        writer.varint(UInt64(bitPattern: recordedAt))
        writer.string(source.format)
        if let digest = source.digest { writer.append(contentsOf: digest) }
        event.encode(to: &writer)
        let crc = writer.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        writer.uint32BigEndian(crc)
    }

    /// The encoded value of this record.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        Self.encode(event: event, recordedAt: recordedAt, source: source, into: &writer)
        return writer.bytes
    }

    /// Why stored bytes are not a valid record.
    package struct Damage: Error, Hashable, Sendable, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }

    /// Checks the checksum of encoded record bytes without decoding the event.
    package static func verifyChecksum(_ bytes: UnsafeRawBufferPointer) throws(Damage) {
        guard bytes.count >= 6 else { throw Damage(reason: "record of \(bytes.count) bytes is too short") }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)])
        let stored = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        let computed = CRC32C.checksum(body)
        guard stored == computed else {
            throw Damage(reason: "checksum mismatch (stored \(hex(stored)), computed \(hex(computed)))")
        }
    }

    /// Decodes only the event of stored record bytes, checking the checksum first: what a
    /// rebuild needs, without materialising the source and digest.
    package static func decodeEvent(_ bytes: UnsafeRawBufferPointer) throws(Damage) -> Event {
        try decodeEvent(bytes) { _, _ in () }.event
    }

    /// ``decodeEvent(_:)``, also calling `names` with the event's account and chat names
    /// (``Event/encodedNames(_:)``), read in place from `bytes`: a replay interns them
    /// without reading them back out of the event.
    package static func decodeEvent<Names>(
        _ bytes: UnsafeRawBufferPointer, names: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) -> Names
    ) throws(Damage) -> (event: Event, names: Names) {
        try verifyChecksum(bytes)
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)]))
        do {
            try skipHeader(&reader)
            let eventStart = reader
            let event = try Event(from: &reader)
            guard reader.isAtEnd else { throw Damage(reason: "\(reader.remaining) trailing bytes") }
            let encoded = try Event.encodedNames(eventStart)
            return (event, names(encoded.account, encoded.chat))
        } catch let error as Damage {
            throw error
        } catch {
            throw Damage(reason: "undecodable: \(error)")
        }
    }

    /// Whether stored record bytes hold an event of `account` (names compare byte for byte),
    /// checking the checksum first but decoding only the event's account name: a read of one
    /// account's records skips the others' without materialising them, and still refuses a
    /// damaged record of any account.
    package static func isEvent(of account: [UInt8], _ bytes: UnsafeRawBufferPointer) throws(Damage) -> Bool {
        try verifyChecksum(bytes)
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)]))
        do {
            try skipHeader(&reader)
            return try Event.encodedNames(reader).account.elementsEqual(account)
        } catch let error as Damage {
            throw error
        } catch {
            throw Damage(reason: "undecodable: \(error)")
        }
    }

    /// Reads a record's version byte, refusing one this build does not know.
    @inline(__always)
    private static func readVersion(_ reader: inout ByteReader) throws {
        let version = try reader.byte()
        // Version 1 records hold the version 1 event encoding, which version 2 extends: one
        // decoder reads both.
        guard version >= 1 && version <= formatVersion else {
            throw Damage(reason: "unknown record format version \(version) (this build reads 1 to \(formatVersion))")
        }
    }

    /// Moves `reader` past a record's version, flags, time, format and digest, to its event.
    static func skipHeader(_ reader: inout ByteReader) throws {
        try readVersion(&reader)
        let flags = try reader.byte()
        guard flags & ~hasDigest == 0 else { throw Damage(reason: "unknown record flags \(flags)") }
        try reader.skipVarint()
        try reader.skipString()
        if flags & hasDigest != 0 { try reader.skip(Source.digestLength) }
    }

    /// Decodes record `seq` from its stored bytes, checking the checksum first.
    package init(seq: UInt64, bytes: UnsafeRawBufferPointer) throws(Damage) {
        try Self.verifyChecksum(bytes)
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)]))
        do {
            try Self.readVersion(&reader)
            let flags = try reader.byte()
            guard flags & ~Self.hasDigest == 0 else { throw Damage(reason: "unknown record flags \(flags)") }
            let recordedAt = Int64(bitPattern: try reader.varint())
            let format = try reader.string()
            let digest = flags & Self.hasDigest != 0 ? try reader.bytes(Source.digestLength) : nil
            let event = try Event(from: &reader)
            guard reader.isAtEnd else { throw Damage(reason: "\(reader.remaining) trailing bytes") }
            self.init(seq: seq, recordedAt: recordedAt, source: Source(format: format, digest: digest), event: event)
        } catch let error as Damage {
            throw error
        } catch {
            throw Damage(reason: "undecodable: \(error)")
        }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
