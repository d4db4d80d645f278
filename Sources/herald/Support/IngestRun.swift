import Foundation
import Synchronization
import HeraldEvents
import HeraldIngest
import HeraldStore

/// The loop behind `herald ingest`: decode each line, append valid ones in batches, report and
/// quarantine bad ones.
struct IngestRun {
    let store: Store
    let format: String
    /// The `--account` given, kept with each quarantined payload for its retry.
    let account: String?
    let allOrNothing: Bool
    let progress: Bool
    let decode: (ArraySlice<UInt8>) throws -> (String, [Event])

    static let defaultBatchSize = 8_192
    /// Batches between two catch-ups of the store's `digests` index during a run.
    static let digestCatchUpBatches = 16
    var batchSize = defaultBatchSize
    var printSeqs = false

    struct Summary: CustomStringConvertible {
        var lines = 0
        /// Payloads whose bytes repeat one already stored, by this run or an earlier one, or an
        /// earlier line of this input (redeliveries). They are appended all the same: the log
        /// keeps every delivery, the projection ignores repeats.
        var duplicates = 0
        var appended = 0
        var rejected = 0
        var quarantineIds: [UInt64] = []
        var firstSeq: UInt64?
        var lastSeq: UInt64?

        var description: String {
            var text = "ingested \(lines) line\(lines == 1 ? "" : "s"): \(appended) event\(appended == 1 ? "" : "s") appended"
            if let firstSeq, let lastSeq, appended > 0 { text += " (seq \(firstSeq)…\(lastSeq))" }
            text += ", \(duplicates) duplicate\(duplicates == 1 ? "" : "s"), \(rejected) rejected"
            if let first = quarantineIds.first, let last = quarantineIds.last {
                text += " (quarantine \(first == last ? "#\(first)" : "#\(first)…#\(last)"); see `herald quarantine list`)"
            }
            return text
        }
    }

    init(
        store: Store, format: String, account: String?, allOrNothing: Bool, progress: Bool,
        decode: @escaping (ArraySlice<UInt8>) throws -> (String, [Event])
    ) {
        self.store = store
        self.format = format
        self.account = account
        self.allOrNothing = allOrNothing
        self.progress = progress
        self.decode = decode
    }

    /// `field: reason`, as in `FILE:LINE: field: reason`.
    static func describe(_ error: any Error) -> String {
        if let error = error as? IngestError {
            return error.field.isEmpty ? error.reason : "\(error.field): \(error.reason)"
        }
        return "\(error)"
    }

    /// What the appending thread reports back: how many events are durable, and their seqs.
    private struct Tally {
        var appended = 0
        var firstSeq: UInt64?
        var lastSeq: UInt64?
    }

    /// Decodes every payload of `reader` and appends the valid ones in batches of
    /// ``batchSize``. Batches commit on a second thread while the next one is decoded (see
    /// ``BatchAppender``); with ``printSeqs``, each event is acknowledged once it is durable.
    func consume(_ reader: inout LineReader) throws -> Summary {
        let tally = Mutex(Tally())
        let appender = BatchAppender(store: store) { [printSeqs] seqs, count in
            if printSeqs { Terminal.line(seqs.map { "ack \($0)" }.joined(separator: "\n")) }
            tally.withLock {
                $0.firstSeq = $0.firstSeq ?? seqs.lowerBound
                $0.lastSeq = seqs.upperBound
                $0.appended += count
            }
        }
        var summary: Summary
        do {
            summary = try decodeAndSubmit(&reader, to: appender)
        } catch {
            // Let the batch in flight finish before the error reaches the caller.
            try? appender.finish()
            throw error
        }
        tally.withLock {
            summary.appended = $0.appended
            summary.firstSeq = $0.firstSeq
            summary.lastSeq = $0.lastSeq
        }
        return summary
    }

    /// The decoding side of ``consume(_:)``: every line of `reader`, with batches handed to
    /// `appender`; quarantines the rejected payloads once every batch has committed.
    private func decodeAndSubmit(_ reader: inout LineReader, to appender: BatchAppender) throws -> Summary {
        var summary = Summary()
        var batch: [(Event, Source)] = []
        var bad: [QuarantinedPayload] = []
        var submitted = 0
        let bar = ProgressBar(enabled: progress && Terminal.stderrIsTTY, label: "ingest")
        // Payloads already stored count as duplicates, whichever run stored them. The store's
        // `digests` index knows those stored up to its last catch-up (at the start of the
        // run, and every `Self.digestCatchUpBatches` batches); the digests of this run's
        // later batches are kept in memory until a catch-up indexes them, so memory stays
        // bounded however long the input. `unseen` are this batch's new digests, looked up
        // in the index as the batch is handed on.
        try store.catchUpDigestIndex()
        var unseen: [[UInt8]] = []
        var batchesSinceCatchUp = 0
        func countStoredDuplicates() throws {
            guard !unseen.isEmpty else { return }
            summary.duplicates += try store.storedPayloads(among: unseen).count
            unseen.removeAll(keepingCapacity: true)
        }
        func flush() throws {
            try countStoredDuplicates()
            // Rejected payloads are kept as their batch goes, so that an ingest stopped
            // midway (a signal, a full disk) keeps the ones it already reported.
            if !allOrNothing && !bad.isEmpty {
                summary.quarantineIds += try store.quarantine(bad)
                bad.removeAll()
            }
            guard !batch.isEmpty else { return }
            try appender.submit(batch)
            submitted += batch.count
            batch = []  // the appender owns the old one now
            // Once `submit` returns, every batch before this one has committed; this one may
            // still be committing, so its digests stay in memory until a later catch-up.
            sinceCatchUp.formUnion(inFlight)
            inFlight = seen
            seen.removeAll(keepingCapacity: true)
            batchesSinceCatchUp += 1
            if batchesSinceCatchUp >= Self.digestCatchUpBatches {
                try store.catchUpDigestIndex()
                sinceCatchUp.removeAll(keepingCapacity: true)
                batchesSinceCatchUp = 0
            }
        }
        var seen = Set<DigestKey>()
        var inFlight = Set<DigestKey>()
        var sinceCatchUp = Set<DigestKey>()
        var framer = PayloadFramer()
        func handle(_ payload: ArraySlice<UInt8>, line: Int) throws {
            if payload.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return }
            summary.lines += 1
            do {
                if let overlong = reader.takeOverlong(line: line) {
                    // Never held whole (see LineReader): only its prefix is here.
                    throw IngestError(
                        format: nil, field: "",
                        reason: "line of \(overlong.size) bytes exceeds the \(LineReader.lineLimit)-byte limit "
                            + "(SHA-256 \(overlong.digest)); its first \(payload.count) bytes are kept in the quarantine")
                }
                let (detected, events) = try decode(payload)
                let source = Source(format: detected, payload: payload)
                if let digest = source.digest {
                    let key = DigestKey(digest)
                    if inFlight.contains(key) || sinceCatchUp.contains(key) || !seen.insert(key).inserted {
                        summary.duplicates += 1
                    } else {
                        unseen.append(digest)
                    }
                }
                for event in events { batch.append((event, source)) }
            } catch {
                summary.rejected += 1
                let reason = Self.describe(error)
                if Terminal.jsonErrors {
                    // One JSON object per rejected line: {"rejected":{"input":…,"line":…,"reason":…}}.
                    var writer = JSONWriter()
                    writer.objectStart()
                    writer.key("rejected")
                    writer.objectStart()
                    writer.key("input"); writer.string(reader.name)
                    writer.key("line"); writer.int(line)
                    writer.key("reason"); writer.string(reason)
                    writer.objectEnd()
                    writer.objectEnd()
                    Terminal.write(writer.string + "\n", to: STDERR_FILENO)
                } else {
                    Terminal.error("\(Formatting.escaped(reader.name)):\(line): \(reason)")
                }
                bad.append(QuarantinedPayload(
                    receivedAt: store.options.clock(), format: format, input: reader.name,
                    line: line, reason: reason, account: account, raw: Array(payload)))
            }
            if !allOrNothing && batch.count >= batchSize {
                try flush()
                let fraction = reader.totalBytes.map { Double(reader.bytesRead) / Double(max($0, 1)) }
                bar.update("\(submitted) events" + (reader.totalBytes.map { ", \(reader.bytesRead >> 20) of \($0 >> 20) MiB read" } ?? ""), fraction: fraction)
            }
        }
        // A stream read as it is written has what it sent so far committed (and, with
        // --print-seqs, acknowledged) whenever the reader would wait for more.
        while let line = try reader.next(whenIdle: { if !allOrNothing { try flush() } }) {
            switch framer.feed(line, number: reader.lineNumber) {
            case .payload(let payload, let number): try handle(payload, line: number)
            case .payloads(let framed): for (payload, number) in framed { try handle(payload, line: number) }
            case .gathering: break
            }
        }
        for (payload, number) in framer.finish() { try handle(payload, line: number) }
        if allOrNothing && !bad.isEmpty {
            try countStoredDuplicates()
            batch.removeAll()
        } else {
            try flush()
        }
        try appender.finish()
        bar.finish()
        summary.quarantineIds += try store.quarantine(bad)
        try store.catchUpDigestIndex()
        try store.catchUpAuditIndex()
        return summary
    }
}

/// A payload digest as two words: hashing it costs no allocation, unlike `[UInt8]`.
private struct DigestKey: Hashable {
    var high: UInt64
    var low: UInt64

    init(_ digest: [UInt8]) {
        high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
