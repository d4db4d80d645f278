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

    /// The keys `herald export` adds to each event. `source` is the ingest format's key in
    /// older exports; in a `note` line it is the note's own field.
    private struct Envelope: Decodable {
        var seq: UInt64
        var recorded: String
        var format: String?
        var source: String?
        var digest: String?
    }

    /// Parses one export line; errors name the field at fault.
    package init(_ line: some DataProtocol, decoder: JSONDecoder = JSONDecoder()) throws(EventError) {
        event = try Event(json: line)
        let envelope: Envelope
        do {
            envelope = try decoder.decode(Envelope.self, from: Data(line))
        } catch let error as DecodingError {
            throw EventError(field: Self.field(of: error), reason: "missing or invalid (export lines carry seq, recorded, format)")
        } catch {
            throw EventError(field: "", reason: "\(error)")
        }
        let isNote = if case .note = event.payload { true } else { false }
        guard let format = envelope.format ?? (isNote ? nil : envelope.source) else {
            throw EventError(field: "format", reason: "missing (export lines carry seq, recorded, format)")
        }
        guard envelope.seq >= 1, envelope.seq <= SeqKey.maximum else {
            throw EventError(field: "seq", reason: "\(envelope.seq) is outside 1…\(SeqKey.maximum)")
        }
        seq = envelope.seq
        recorded = envelope.recorded
        source = Source(format: format, digest: try envelope.digest.map(Self.digest))
    }

    private static func field(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): key.stringValue
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.last?.stringValue ?? ""
        @unknown default: ""
        }
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
