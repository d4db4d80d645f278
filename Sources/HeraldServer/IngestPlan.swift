import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore

/// A decoded request body: the events to append (each with the source of its payload) and
/// the payloads rejected. Decoding is pure; ``StoreHost/commit(_:metrics:)`` then stores it.
struct IngestPlan: Sendable {
    /// One rejected payload.
    struct Rejection: Sendable {
        /// Its line in the body (1-based), or its index in a JSON array (0-based) for events.
        var line: Int
        var field: String
        var reason: String
        var raw: [UInt8]
        /// The format whose decoding failed (`nil`: detection failed).
        var format: PayloadFormat? = nil

        /// Whether a Web Push body was refused before it decrypted: its header or an
        /// encrypted record is bad, or the wrong keys sealed it (errors of the decrypted
        /// events say "produced an invalid…" or name the inner format).
        var failedToDecrypt: Bool {
            format == .webpush && (field == "body" || field.hasPrefix("header.")) && !reason.hasPrefix("produced an invalid")
        }
    }

    var batch: [(Event, Source)] = []
    var rejected: [Rejection] = []
    /// The format names the rejected payloads were read as (for the quarantine).
    var format: String
    /// The `account` query parameter, kept with quarantined payloads.
    var account: String?

    /// The digests of the payloads appended: a crashed request's records are found by them
    /// (see ``Idempotency``).
    var digests: Set<[UInt8]> { Set(batch.compactMap { $0.1.digest }) }

    /// The payloads of a body, framed as every ingest frames them
    /// (`PayloadFramer.payloads(inBody:wholeDocument:)`): a JSON array's elements, or one
    /// document (`wholeDocument`: a pretty-printed event), or its lines. Each payload is its
    /// own bytes in the body, so its digest is the same alone or in an array.
    static func payloads(of body: [UInt8], wholeDocument: Bool) throws -> [(line: Int, bytes: [UInt8])] {
        do {
            return try PayloadFramer.payloads(inBody: body, wholeDocument: wholeDocument).map { ($0.line, Array($0.payload)) }
        } catch {
            throw ServerError.badRequest(field: error.field, error.reason)
        }
    }

    /// Decodes every payload with `format` (`nil`: detect each) as every ingest decodes them
    /// (``DecodedBatch``); bad ones become rejections.
    static func decode(
        _ payloads: [(line: Int, bytes: [UInt8])], format: PayloadFormat?, context: IngestContext
    ) -> IngestPlan {
        var decoded = DecodedBatch(decoder: PayloadDecoder(format: format, context: context))
        for (line, bytes) in payloads { _ = decoded.add(bytes[...], line: line) }
        var plan = IngestPlan(format: format?.rawValue ?? "auto", account: context.account)
        plan.batch = decoded.events
        plan.rejected = decoded.rejections.map {
            Rejection(line: $0.line, field: $0.error.field, reason: $0.error.reason, raw: $0.raw, format: $0.error.format)
        }
        return plan
    }
}

/// What a mutating request answered: kept under its idempotency key.
struct StoredReply: Sendable, Hashable {
    var status: Int
    var body: [UInt8]
}

extension StoreHost {
    /// Quarantines the plan's rejections (when `quarantine`), appends its batch in one
    /// commit, and returns the seqs (empty when nothing was appended) and quarantine ids.
    func commit(_ plan: IngestPlan, quarantine: Bool, metrics: ServerMetrics) async throws -> (seqs: [UInt64], quarantined: [UInt64]) {
        let started = ContinuousClock.now
        var quarantined: [UInt64] = []
        if quarantine && !plan.rejected.isEmpty {
            quarantined = try await run { store in
                let now = store.options.clock()
                let kept = try store.quarantine.addWithinLimit(plan.rejected.map {
                    QuarantinedPayload(
                        receivedAt: now, format: plan.format, input: "http", line: $0.line,
                        reason: $0.field.isEmpty ? $0.reason : "\($0.field): \($0.reason)", account: plan.account, raw: $0.raw)
                })
                if kept.dropped > 0 { metrics.quarantineDropped.increment(by: Int64(kept.dropped)) }
                return kept.ids
            }
        }
        let seqs = try await append(plan.batch).map { Array($0) } ?? []
        let result = (seqs, quarantined)
        if !plan.batch.isEmpty {
            metrics.commitLatency.recordNanoseconds(Int64((ContinuousClock.now - started) / .nanoseconds(1)))
            var counts: [String: [String: Int]] = [:]
            for (event, source) in plan.batch { counts[event.type.rawValue, default: [:]][source.format, default: 0] += 1 }
            for (type, formats) in counts { for (format, count) in formats { metrics.appended(type: type, format: format, count: count) } }
        }
        if !plan.rejected.isEmpty { metrics.rejected.increment(by: Int64(plan.rejected.count)) }
        return result
    }
}
