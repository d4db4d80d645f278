import HeraldEvents
import HeraldStore

/// Ingests a stream of payloads into a `Store`: decodes each one, appends the events of the
/// valid ones in batches, and keeps the rejected ones in the store's quarantine.
///
/// A session is a value that owns no thread. Give it payloads with ``add(_:line:)``, which
/// decodes without touching the store and says what became of each; ``commit()`` appends the
/// batch so far in one durable commit (`Store.appendBatch(_:)`) and quarantines the payloads
/// rejected so far; ``finish()`` commits the rest and returns the ``Summary``. An event
/// counted in ``Summary/appended`` is durable.
///
/// ```swift
/// let decoder = PayloadDecoder(format: .telegram, context: IngestContext(account: "tg:1", receivedAt: now))
/// var session = IngestSession(store: store, configuration: .init(decoder: decoder, input: "pushes.jsonl"))
/// for (index, line) in lines.enumerated() {
///     if case .rejected(let rejection) = session.add(ArraySlice(line.utf8), line: index + 1) {
///         print("line \(index + 1): \(rejection.reason)")
///     }
///     if session.isBatchFull { try session.commit() }
/// }
/// let summary = try session.finish()
/// ```
public struct IngestSession {
    /// How a session decodes, batches and quarantines.
    public struct Configuration: Sendable {
        /// Events per commit, unless the caller commits sooner.
        public static let defaultBatchSize = 8_192

        /// The format and context payloads are decoded with.
        public var decoder: PayloadDecoder
        /// The format name kept with quarantined payloads: the one asked for (`auto` too).
        public var formatName: String
        /// The input's name kept with quarantined payloads: a path, `-` or `http`.
        public var input: String
        /// Append nothing if any payload is rejected: the whole input is one batch, committed
        /// by ``IngestSession/finish()`` only when no payload was rejected.
        public var allOrNothing: Bool
        /// Events that make a batch full (``IngestSession/isBatchFull``).
        public var batchSize: Int

        /// A configuration; `formatName` defaults to the decoder's format (`auto` for none).
        public init(
            decoder: PayloadDecoder, formatName: String? = nil, input: String, allOrNothing: Bool = false,
            batchSize: Int = defaultBatchSize
        ) {
            precondition(batchSize > 0, "a batch holds at least one event")
            self.decoder = decoder
            self.formatName = formatName ?? decoder.format?.rawValue ?? "auto"
            self.input = input
            self.allOrNothing = allOrNothing
            self.batchSize = batchSize
        }
    }

    /// A payload that was not appended: its line, why, and its bytes.
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
        /// Decoded: this many events joined the batch.
        case accepted(events: Int)
        /// Rejected: it goes to the quarantine at the next commit.
        case rejected(Rejection)
    }

    /// What a session did.
    public struct Summary: Sendable, Hashable {
        /// Payloads given (blank ones not counted).
        public var lines = 0
        /// Events appended: each one is durable.
        public var appended = 0
        /// Payloads rejected.
        public var rejected = 0
        /// The quarantine ids of the rejected payloads, in order.
        public var quarantineIds: [UInt64] = []
        /// The seqs of the first and last event appended.
        public var firstSeq: UInt64?
        public var lastSeq: UInt64?

        /// An empty summary.
        package init() {}
    }

    /// The store events are appended to.
    public let store: Store
    public let configuration: Configuration
    /// What the session did so far.
    public private(set) var summary = Summary()
    /// Events decoded and waiting for the next commit (its rejections move to `quarantine`
    /// as they come, stamped with the time they were received).
    private var batch: DecodedBatch
    /// Rejected payloads waiting for the next commit's quarantine.
    private var quarantine: [QuarantinedPayload] = []

    /// A session appending to `store`.
    public init(store: Store, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
        self.batch = DecodedBatch(decoder: configuration.decoder)
    }

    /// Events decoded and not yet committed.
    public var pendingEvents: Int { batch.events.count }

    /// Whether the batch holds ``Configuration/batchSize`` events or more, so that the caller
    /// should ``commit()`` (never with all or nothing).
    public var isBatchFull: Bool { !configuration.allOrNothing && batch.events.count >= configuration.batchSize }

    /// Decodes one payload: its events join the batch, or it is rejected. Touches no store.
    ///
    /// - Parameters:
    ///   - payload: the payload's bytes, as they appeared in the input (one line, one
    ///     document or one element of an array); its digest is taken over exactly these.
    ///   - line: the line it started on, for reports and the quarantine.
    public mutating func add(_ payload: ArraySlice<UInt8>, line: Int) -> Verdict {
        add(payload, line: line, overlong: nil)
    }

    /// ``add(_:line:)`` of a line the reader cut short: when it was longer than
    /// `LineReader.lineLimit`, `overlong` is what the reader knows of it (then `payload` is
    /// only its prefix, and it is rejected).
    package mutating func add(_ payload: ArraySlice<UInt8>, line: Int, overlong: LineReader.Overlong?) -> Verdict {
        let verdict = batch.add(payload, line: line, overlong: overlong)
        switch verdict {
        case .blank:
            return verdict
        case .accepted:
            summary.lines += 1
        case .rejected(let rejection):
            summary.lines += 1
            summary.rejected += 1
            batch.rejections.removeAll()
            quarantine.append(QuarantinedPayload(
                receivedAt: store.options.clock(), format: configuration.formatName, input: configuration.input,
                line: line, reason: rejection.reason, account: configuration.decoder.context.account, raw: rejection.raw))
        }
        return verdict
    }

    /// Quarantines the payloads rejected so far, then appends the batch in one commit; returns
    /// the seqs it got (`nil`: nothing to append). With all or nothing it does nothing: only
    /// ``finish()`` commits.
    ///
    /// Rejected payloads are kept as the batches go, so an ingest stopped midway keeps those it
    /// already reported. When the append throws, nothing of the batch is appended and the
    /// session must not be used further.
    @discardableResult
    public mutating func commit() throws -> ClosedRange<UInt64>? {
        guard !configuration.allOrNothing else { return nil }
        try quarantineRejected()
        return try appendBatch()
    }

    /// Commits what is left (with all or nothing: everything, or nothing when a payload was
    /// rejected), quarantines the rejected payloads, brings the store's audit index up to
    /// date (when it has one), and returns the summary.
    public mutating func finish() throws -> Summary {
        try commitRest()
        try quarantineRejected()
        try store.auditIndex.catchUp()
        return summary
    }

    /// The first step of ``finish()``: appends the batch left (with all or nothing, drops it
    /// when a payload was rejected); returns the seqs it got.
    @discardableResult
    mutating func commitRest() throws -> ClosedRange<UInt64>? {
        guard !configuration.allOrNothing || summary.rejected == 0 else {
            batch.events.removeAll()
            return nil
        }
        return try appendBatch()
    }

    private mutating func quarantineRejected() throws {
        guard !quarantine.isEmpty else { return }
        summary.quarantineIds += try store.quarantine.add(quarantine)
        quarantine.removeAll()
    }

    @discardableResult
    private mutating func appendBatch() throws -> ClosedRange<UInt64>? {
        guard !batch.events.isEmpty else { return nil }
        let events = batch.events
        batch.events = []
        guard let seqs = try store.appendBatch(events) else { return nil }
        summary.appended += events.count
        summary.firstSeq = summary.firstSeq ?? seqs.lowerBound
        summary.lastSeq = seqs.upperBound
        return seqs
    }
}
