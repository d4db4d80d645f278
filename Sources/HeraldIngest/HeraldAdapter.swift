import HeraldEvents

/// Adapts Herald's own canonical JSONL: one line is one event, decoded by `Event(json:)`.
///
/// The line is first checked by ``JSONParser`` (bounded nesting, no traps) and then
/// decoded and validated by the event model; its errors keep their field names.
struct HeraldAdapter {
    /// Decodes one canonical event line.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        _ = try PayloadObject.parse(bytes, format: .herald)
        let event: Event
        do {
            event = try Event(json: bytes)
        } catch {
            throw IngestError(format: .herald, error)
        }
        _ = try context.resolveAccount(named: event.account, field: "account", format: .herald)
        return IngestResult(format: .herald, events: [event], encrypted: false)
    }
}
