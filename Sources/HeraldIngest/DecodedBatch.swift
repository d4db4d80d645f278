import HeraldEvents
import HeraldStore

/// Payloads decoded with one ``PayloadDecoder``: the events of the valid ones, in order, and
/// the rejected ones with their bytes.
///
/// A pure value: it touches no store. An ``IngestSession`` fills one between its commits; the
/// server fills one per request and commits it through its own (suspending) path, so a
/// payload is decoded and judged the same way whichever way it came.
///
/// ```swift
/// var batch = DecodedBatch(decoder: PayloadDecoder(format: .herald, context: IngestContext(receivedAt: now)))
/// for (payload, line) in try PayloadFramer.payloads(inBody: body, wholeDocument: false) {
///     _ = batch.add(payload, line: line)
/// }
/// // batch.events go to Store.appendBatch(_:), batch.rejections to the quarantine.
/// ```
public struct DecodedBatch: Sendable {
    /// A payload that was not decoded: its line, why, and its bytes.
    public struct Rejection: Sendable, Hashable {
        /// The line the payload started on (an element's index, in a JSON array body).
        public var line: Int
        /// The format and the field at fault.
        public var error: IngestError
        /// The payload's bytes as they were given (only the prefix of an overlong line).
        public var raw: [UInt8]

        /// `field: reason`, as reported and kept in the quarantine.
        public var reason: String { error.fieldAndReason }
    }

    /// What became of one payload.
    public enum Verdict: Sendable, Hashable {
        /// Only blanks: not a payload, not counted.
        case blank
        /// Decoded: its events are in ``DecodedBatch/events``.
        case accepted(events: Int)
        /// Rejected: it is in ``DecodedBatch/rejections``.
        case rejected(Rejection)
    }

    /// The format and context payloads are decoded with.
    public let decoder: PayloadDecoder
    /// The events of the payloads accepted, in order, each with its payload's source.
    public var events: [(Event, Source)] = []
    /// The payloads rejected, in order.
    public var rejections: [Rejection] = []

    /// An empty batch decoding with `decoder`.
    public init(decoder: PayloadDecoder) {
        self.decoder = decoder
    }

    /// Decodes one payload: its events join ``events``, or it joins ``rejections``.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as they appeared in the input.
    ///   - line: the line it started on, for reports and the quarantine.
    ///   - overlong: when the line was longer than ``LineReader/lineLimit``, what the reader
    ///     knows of it (then `payload` is only its prefix, and it is rejected).
    public mutating func add(_ payload: ArraySlice<UInt8>, line: Int, overlong: LineReader.Overlong? = nil) -> Verdict {
        if payload.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return .blank }
        do throws(IngestError) {
            if let overlong {
                throw IngestError(
                    format: nil, field: "",
                    reason: "line of \(overlong.size) bytes exceeds the \(LineReader.lineLimit)-byte limit "
                        + "(SHA-256 \(overlong.digest)); its first \(payload.count) bytes are kept in the quarantine")
            }
            let decoded = try decoder.decode(payload)
            for event in decoded.events { events.append((event, decoded.source)) }
            return .accepted(events: decoded.events.count)
        } catch {
            let rejection = Rejection(line: line, error: error, raw: Array(payload))
            rejections.append(rejection)
            return .rejected(rejection)
        }
    }
}
