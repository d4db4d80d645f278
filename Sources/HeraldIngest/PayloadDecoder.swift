import HeraldEvents
import HeraldStore

/// Decodes payloads in one format (or detecting each one's) with one context, and names the
/// source of the events each one gives: its format and the digest of its own bytes.
///
/// ```swift
/// let decoder = PayloadDecoder(format: nil, context: IngestContext(receivedAt: now))
/// let decoded = try decoder.decode(ArraySlice(line.utf8))
/// try store.append(contentsOf: decoded.events.map { ($0, decoded.source) })
/// ```
public struct PayloadDecoder: Sendable {
    /// What one payload became.
    public struct Decoded: Sendable {
        /// The format it was read as: the one asked for, or the detected one.
        public var format: PayloadFormat
        /// Its canonical events, in order; each passed `Event.validate()`.
        public var events: [Event]
        /// The source every one of its events is stored with: ``format`` and the digest of
        /// the payload's bytes exactly as given.
        public var source: Source
    }

    /// The format names a caller may ask for: `auto` (detect each payload) and each format.
    package static let formatNames = ["auto"] + PayloadFormat.allCases.map(\.rawValue)

    /// The format to read with; `nil` detects each payload's.
    public var format: PayloadFormat?
    /// The account, receive time and keys the adapters use.
    public var context: IngestContext

    /// A decoder for `format` (`nil`: detect) with `context`.
    public init(format: PayloadFormat?, context: IngestContext) {
        self.format = format
        self.context = context
    }

    /// Decodes one payload.
    ///
    /// - Parameter payload: the payload's bytes: one line, one document or one element of
    ///   an array, as it appeared in the input. Its digest is taken over exactly these bytes.
    /// - Throws: ``IngestError`` naming the format and the field at fault.
    public func decode(_ payload: ArraySlice<UInt8>) throws(IngestError) -> Decoded {
        let result = try Ingest.decode(payload, format: format, context: context)
        return Decoded(format: result.format, events: result.events, source: Source(format: result.format.rawValue, payload: payload))
    }
}

extension IngestError {
    /// `field: reason`, or the reason alone for an error of the whole payload: how ingest
    /// reports a rejected payload (`FILE:LINE: field: reason`) and keeps it in the quarantine.
    package var fieldAndReason: String {
        field.isEmpty ? reason : "\(field): \(reason)"
    }
}
