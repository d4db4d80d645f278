extension IngestSession {
    /// What ``ingest(_:report:)`` tells its caller as it goes.
    package enum Report: Sendable, Hashable {
        /// A payload was rejected (reported at once, quarantined at the next commit).
        case rejected(Rejection)
        /// A batch is durable: these are its seqs.
        case committed(ClosedRange<UInt64>)
        /// A full batch was committed: events appended so far, bytes read so far, and the
        /// input's size when it is a regular file.
        case progress(appended: Int, bytesRead: Int, totalBytes: Int?)
    }

    /// Ingests every payload of `reader`, framed by a ``PayloadFramer``, and finishes (see
    /// ``finish()``).
    ///
    /// Batches commit as they fill. Reading a stream (a pipe), whatever has arrived is
    /// committed whenever the reader would wait for more, so a live feed is stored (and
    /// reported committed) as it comes.
    ///
    /// - Parameters:
    ///   - reader: the input.
    ///   - report: hears of each rejected payload, each durable batch and the progress.
    /// - Returns: the session's summary.
    /// - Throws: ``LineReader/Failure``, the store's errors, or what `report` throws; events
    ///   reported committed before stay durable.
    package mutating func ingest(_ reader: inout LineReader, report: (Report) throws -> Void) throws -> Summary {
        var framer = PayloadFramer()
        while let line = try reader.next(whenIdle: { try commit(report) }) {
            switch framer.feed(line, number: reader.lineNumber) {
            case .payload(let payload, let number):
                try take(payload, line: number, from: &reader, report)
            case .payloads(let framed):
                for (payload, number) in framed { try take(payload, line: number, from: &reader, report) }
            case .gathering:
                break
            }
        }
        for (payload, number) in framer.finish() { try take(payload, line: number, from: &reader, report) }
        if let seqs = try commitRest() { try report(.committed(seqs)) }
        return try finish()
    }

    /// Adds one framed payload, and commits when that fills the batch.
    private mutating func take(
        _ payload: ArraySlice<UInt8>, line: Int, from reader: inout LineReader, _ report: (Report) throws -> Void
    ) throws {
        if case .rejected(let rejection) = add(payload, line: line, overlong: reader.takeOverlong(line: line)) {
            try report(.rejected(rejection))
        }
        guard isBatchFull else { return }
        try commit(report)
        try report(.progress(appended: summary.appended, bytesRead: reader.bytesRead, totalBytes: reader.totalBytes))
    }

    /// ``commit()``, reporting the seqs it got.
    private mutating func commit(_ report: (Report) throws -> Void) throws {
        if let seqs = try commit() { try report(.committed(seqs)) }
    }
}
