import Foundation
import HeraldEvents

extension LogRecord {
    /// Writes the record as one line of `herald export` (`schema/export-line.schema.json`),
    /// without the newline: `seq`, `recorded`, `format` (and `digest`), then the event's fields.
    ///
    /// The ingest format is `format`, not `source`: a `note` event has a `source` field of its
    /// own, and a line holding both would repeat a key. `herald import` reads these lines
    /// back, as do the files that archive retention exports (see ``ArchiveRetention``).
    public func writeExportLine(to writer: inout JSONWriter) {
        event.writeJSON(to: &writer) { writer in
            writer.key("seq"); writer.int(seq)
            writer.key("recorded"); writer.string(ISO8601.string(milliseconds: recordedAt))
            writer.key("format"); writer.string(source.format)
            if let digest = source.digest {
                writer.key("digest"); writer.string(Self.hex(digest))
            }
        }
    }

    /// Lowercase hexadecimal.
    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// One line of `herald export` read back: the event, and the seq, recorded time and source
/// the line carries (`herald import`, and the account moves of `herald serve`).
package struct ExportLine: Sendable {
    /// The event.
    package var event: Event
    /// The seq it had in the exporting store.
    package var seq: UInt64
    /// The recorded time as written, ISO 8601 (or `@UNIXSECONDS`).
    package var recorded: String
    /// Its ingest format and payload digest.
    package var source: Source

    /// Parses one export line; errors name the field at fault. The event is read as every
    /// event is (strictly, `Event(json:)`); the keys `herald export` adds to it (`seq`,
    /// `recorded`, `format`, `digest`, and `source` for the format in older exports, where
    /// a `note` line's `source` is the note's own field) with the tolerant ``JSONParser``.
    package init(_ line: some DataProtocol) throws(EventError) {
        event = try Event(json: line)
        guard case .object(let fields)? = try? JSONParser.parse(Array(line)) else {
            throw EventError(field: "", reason: "not a JSON object")
        }
        /// The member `name` read by `read`; `nil` when absent or `null`.
        func member<T>(_ name: String, _ read: (JSONValue) -> T?) throws(EventError) -> T? {
            guard let value = fields[name], !value.isNull else { return nil }
            guard let read = read(value) else {
                throw EventError(field: name, reason: "missing or invalid (export lines carry seq, recorded, format)")
            }
            return read
        }
        guard let seq = try member("seq", \.unsigned) else {
            throw EventError(field: "seq", reason: "missing (export lines carry seq, recorded, format)")
        }
        guard let recorded = try member("recorded", \.string) else {
            throw EventError(field: "recorded", reason: "missing (export lines carry seq, recorded, format)")
        }
        let isNote = if case .note = event.payload { true } else { false }
        var format = try member("format", \.string)
        if format == nil, !isNote { format = try member("source", \.string) }
        guard let format else {
            throw EventError(field: "format", reason: "missing (export lines carry seq, recorded, format)")
        }
        guard seq >= 1, seq <= SeqKey.maximum else {
            throw EventError(field: "seq", reason: "\(seq) is outside 1…\(SeqKey.maximum)")
        }
        self.seq = seq
        self.recorded = recorded
        var digest: [UInt8]?
        if let hex = try member("digest", \.string) { digest = try Self.digest(hex) }
        source = Source(format: format, digest: digest)
    }

    private static func digest(_ hex: String) throws(EventError) -> [UInt8] {
        let bytes = Array(hex.utf8)
        guard bytes.count == Source.digestLength * 2 else { throw EventError(field: "digest", reason: "expected \(Source.digestLength * 2) hex digits") }
        var digest: [UInt8] = []
        for i in stride(from: 0, to: bytes.count, by: 2) {
            guard let byte = UInt8(String(decoding: bytes[i...i + 1], as: UTF8.self), radix: 16) else {
                throw EventError(field: "digest", reason: "not hexadecimal")
            }
            digest.append(byte)
        }
        return digest
    }
}
