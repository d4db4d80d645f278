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
