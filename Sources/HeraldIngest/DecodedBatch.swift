import HeraldEvents
import HeraldStore

/// Payloads decoded with one ``PayloadDecoder``: the events of the valid ones, in order, and
/// the rejected ones with their bytes.
///
/// A pure value: it touches no store. An ``IngestSession`` fills one between its commits; the
/// server fills one per request (from `PayloadFramer.payloads(inBody:wholeDocument:)`) and
/// commits it through its own (suspending) path, so a payload is decoded and judged the same
/// way whichever way it came.
package struct DecodedBatch: Sendable {
    /// A payload that was not decoded (``IngestSession/Rejection``).
    package typealias Rejection = IngestSession.Rejection

    /// What became of one payload (``IngestSession/Verdict``).
    package typealias Verdict = IngestSession.Verdict

    /// The format and context payloads are decoded with.
    package let decoder: PayloadDecoder
    /// The events of the payloads accepted, in order, each with its payload's source.
    package var events: [(Event, Source)] = []
    /// The payloads rejected, in order.
    package var rejections: [Rejection] = []

    /// An empty batch decoding with `decoder`.
    package init(decoder: PayloadDecoder) {
        self.decoder = decoder
    }

    /// Decodes one payload: its events join ``events``, or it joins ``rejections``.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as they appeared in the input.
    ///   - line: the line it started on, for reports and the quarantine.
    ///   - overlong: when the line was longer than ``LineReader/lineLimit``, what the reader
    ///     knows of it (then `payload` is only its prefix, and it is rejected).
    package mutating func add(_ payload: ArraySlice<UInt8>, line: Int, overlong: LineReader.Overlong? = nil) -> Verdict {
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
