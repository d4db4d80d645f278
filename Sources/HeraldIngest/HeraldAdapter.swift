import HeraldEvents

/// Adapts Herald's own canonical JSONL: one line is one event, decoded by `Event(json:)`.
///
/// The event model's single-pass decoder reads the bytes directly (no ``JSONParser``
/// pre-pass): it bounds nesting, rejects invalid UTF-8 and lone surrogates, and its errors
/// keep their field names (`""` with `invalid JSON at byte N: …` for malformed lines). A
/// leading UTF-8 byte-order mark is skipped, as every other adapter's parser does.
struct HeraldAdapter {
    /// Decodes one canonical event line.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(IngestError) in try decode(buffer, context: context) }
        }.get()
    }

    /// Decodes one canonical event line from bytes valid during the call.
    static func decode(_ bytes: UnsafeRawBufferPointer, context: IngestContext) throws(IngestError) -> IngestResult {
        let event: Event
        do {
            event = try Event(json: bytes.starts(with: JSONParser.byteOrderMark) ? UnsafeRawBufferPointer(rebasing: bytes[JSONParser.byteOrderMark.count...]) : bytes)
        } catch {
            throw IngestError(format: .herald, error)
        }
        _ = try context.resolveAccount(named: event.account, field: "account", format: .herald)
        return IngestResult(format: .herald, events: [event], encrypted: false)
    }
}
