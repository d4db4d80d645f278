import HeraldEvents
import HeraldProjection
import LMDB

// Reading records: the public readers (the whole readable history, archive first) and the
// store's own readers of the log alone and of stored bytes, for maintenance and recovery.

extension StoreHistory {
    /// The records with seq in `from...through`, in order: the archive's first, then the log's.
    ///
    /// Page through the history with `limit`, passing the last seq returned plus one as the
    /// next `from`; an empty page is the end. A damaged record throws
    /// ``StoreError/Code/damagedRecord`` naming its seq.
    ///
    /// - Parameters:
    ///   - from: The first seq to read.
    ///   - through: The last seq to read.
    ///   - account: Only this account's records (every record is still checked); `nil`: all.
    ///   - limit: At most this many records (at least 1); `nil`: no limit.
    public func records(
        from: UInt64 = 1, through: UInt64 = .max, account: String? = nil, limit: Int? = nil
    ) throws -> [LogRecord] {
        precondition(limit.map { $0 > 0 } ?? true, "a page holds at least one record")
        var records: [LogRecord] = []
        if let limit { records.reserveCapacity(min(limit, 4096)) }
        try forEach(from: from, through: through, account: account) { record in
            records.append(record)
            return records.count < limit ?? .max
        }
        return records
    }

    /// ``records(from:through:account:limit:)``, suspending (not blocking) the caller while
    /// the store's own threads read.
    public func records(
        from: UInt64 = 1, through: UInt64 = .max, account: String? = nil, limit: Int? = nil
    ) async throws -> [LogRecord] {
        try await offload(on: blockingQueue) { try self.records(from: from, through: through, account: account, limit: limit) }
    }

    /// Calls `body` with each record with seq in `from...through`, in order (the archive's
    /// first, then the log's), until `body` returns `false`.
    ///
    /// A damaged record throws naming its seq, after `body` has had every record before it. A
    /// long run is read and decoded on a second thread. `body` runs inside a read transaction:
    /// it must not wait for an append on another thread (growing the map waits for every
    /// transaction of the process to end, this one included); collect what you need and
    /// append after this returns.
    ///
    /// - Parameters:
    ///   - from: The first seq to read.
    ///   - through: The last seq to read.
    ///   - account: Only this account's records: every record's checksum is still checked,
    ///     but only `account`'s are decoded. `nil`: all.
    ///   - body: Gets each record; returns `true` to go on, `false` to stop.
    public func forEach(
        from: UInt64 = 1, through: UInt64 = .max, account: String? = nil, _ body: (LogRecord) throws -> Bool
    ) throws {
        try forEachRecord(includingArchive: true, from: from, through: through, account: account, body)
    }

    /// The reader behind ``forEach(from:through:account:_:)``: without `includingArchive`, the
    /// log's records after the compaction base only.
    func forEachRecord(
        includingArchive: Bool, from: UInt64, through: UInt64, account: String?, _ body: (LogRecord) throws -> Bool
    ) throws {
        guard let account else {
            return try forEachDecodedRecord(
                includingArchive: includingArchive, from: from, through: through,
                decode: { seq, bytes, location in try Store.decodeRecord(seq: seq, bytes: bytes, in: location) },
                { record in try body(record) })
        }
        try forEachRecordOrSkip(includingArchive: includingArchive, from: from, through: through, account: account) { _, record in
            try record.map(body) ?? true
        }
    }

    /// ``forEachRecord(includingArchive:from:through:account:_:)`` for one account, also
    /// calling `body` with the seq alone (record `nil`) for each record of another account.
    func forEachRecordOrSkip(
        includingArchive: Bool, from: UInt64, through: UInt64, account: String,
        _ body: (UInt64, LogRecord?) throws -> Bool
    ) throws {
        let name = Array(account.utf8)
        try forEachDecodedRecord(
            includingArchive: includingArchive, from: from, through: through,
            decode: { seq, bytes, location -> (UInt64, LogRecord?) in
                do {
                    guard try LogRecord.isEvent(of: name, bytes) else { return (seq, nil) }
                } catch let damage as LogRecord.Damage {
                    throw StoreError.damagedRecord(path: location, seq: seq, reason: damage.reason)
                }
                return (seq, try Store.decodeRecord(seq: seq, bytes: bytes, in: location))
            },
            { decoded in try body(decoded.0, decoded.1) })
    }

    /// Calls `body` with the records after `seq` through `through` of the history a rebuild
    /// replays, in batches for ``Projection/replay(_:)`` (lent: valid during the call): the
    /// archive's records up to the base when the history is complete and `seq` is below the
    /// base, then the log's records after the base. Decodes only events; a long history is
    /// read and decoded on a second thread, which also interns each event's account and chat
    /// names and keeps the usual `notify` in a form replayed without `String`s.
    func forEachHistoryBatch(after seq: UInt64, through: UInt64 = .max, _ body: (ReplayBatch) throws -> Void) throws {
        let interner = DecodingInterner()
        try forEachDecodedBatch(
            includingArchive: true, from: seq + 1, through: through,
            decode: { (batch: inout ReplayBatch, seq, bytes, location) in
                do {
                    try batch.add(seq: seq, record: bytes, interner: interner)
                } catch let error as LogRecord.Damage {
                    throw StoreError.damagedRecord(path: location, seq: seq, reason: error.reason)
                }
            },
            { batch in
                try body(batch)
                return true
            })
    }

    /// How many records a run must span before reading and decoding move to a second thread
    /// (``BatchPipeline``): below it, starting a thread costs more than it saves (a restart's
    /// short tail after its snapshot).
    static let pipelinedRunMinimum: UInt64 = 32_768
    /// Records per batch handed from the decoding thread to the caller.
    static let pipelineBatchSize = 1_024
    /// Batches in flight: one filling, one queued, one being applied.
    static let pipelineBufferCount = 3

    /// Calls `body` with `decode` of each stored record in `from...through` (archive first
    /// when asked), in order, until it returns false; `body` gets it `inout` so that it is lent,
    /// not copied, and should not change it. When the run is long, one thread reads
    /// and decodes while the calling thread runs `body`; errors surface in the same order
    /// either way: `body` sees every record before the one that failed.
    private func forEachDecodedRecord<Decoded: Sendable>(
        includingArchive: Bool, from: UInt64, through: UInt64,
        decode: @escaping @Sendable (UInt64, UnsafeRawBufferPointer, String) throws -> Decoded,
        _ body: (inout Decoded) throws -> Bool
    ) throws {
        try forEachDecodedBatch(
            includingArchive: includingArchive, from: from, through: through,
            decode: { (batch: inout [Decoded], seq, bytes, location) in batch.append(try decode(seq, bytes, location)) },
            { batch in
                try batch.withUnsafeMutableBufferPointer { elements in
                    // In place (`inout`), so each element is lent to `body` rather than copied:
                    // a copy retains, on cache lines the producer's core wrote.
                    for index in elements.indices {
                        guard try body(&elements[index]) else { return false }
                    }
                    return true
                }
            })
    }

    /// ``forEachDecodedRecord(includingArchive:from:through:decode:_:)`` a batch at a time:
    /// `decode` adds each stored record to a batch, and `body` gets each batch (lent, whole
    /// when the run is long, of one record otherwise) until it returns false.
    private func forEachDecodedBatch<Batch: PipelineBatch & Sendable>(
        includingArchive: Bool, from: UInt64, through: UInt64,
        decode: @escaping @Sendable (inout Batch, UInt64, UnsafeRawBufferPointer, String) throws -> Void,
        _ body: (inout Batch) throws -> Bool
    ) throws {
        let last = min(through, try lastSeqInLog())
        guard last >= from, last - from >= Self.pipelinedRunMinimum else {
            var batch = Batch()
            try forEachStoredRecord(includingArchive: includingArchive, from: from, through: through) { seq, bytes, location in
                batch.empty(reservingCapacity: 1)
                try decode(&batch, seq, bytes, location)
                return try body(&batch)
            }
            return
        }
        try BatchPipeline<Batch>.run(
            batchSize: Self.pipelineBatchSize, bufferCount: Self.pipelineBufferCount,
            produce: { emit in
                try self.forEachStoredRecord(includingArchive: includingArchive, from: from, through: through) {
                    seq, bytes, location in try emit { batch in try decode(&batch, seq, bytes, location) }
                }
            },
            consumeBatch: body)
    }

    /// The stored bytes of each record in `from...through` (archive first when asked), with
    /// the path of the environment that holds it.
    private func forEachStoredRecord(
        includingArchive: Bool, from: UInt64, through: UInt64,
        _ body: (UInt64, UnsafeRawBufferPointer, String) throws -> Bool
    ) throws {
        let (facts, purged) = try factsAndGaps()
        let base = facts.base
        // When the history says the archive holds what compaction removed, a read without
        // it would silently start after the base, so it must be there and whole. (When
        // compaction dropped records without an archive, the history is not complete and a
        // read starts after the base, as documented: callers start from the base snapshot,
        // or say so.)
        // The archive holds `origin+1...base` (records up to the origin were discarded on
        // purpose); a read from at or below the origin starts after it.
        let holdsArchived = facts.origin < base
        if includingArchive, base > 0, from <= base {
            let archive = try archive()
            if archive == nil && holdsArchived {
                throw StoreError.missingArchive(path: path, through: facts.archivedThrough)
            }
            if let archive, holdsArchived {
                var going = true
                let last = min(through, base)
                let first = max(from, facts.origin + 1)
                var continuity = SeqContinuity(from: first, floor: facts.origin, gaps: purged)
                try archive.forEachRawRecord(from: first, through: last) { seq, bytes in
                    if let problem = continuity.accept(seq) {
                        throw StoreError.brokenSequence(path: archive.path, seq: problem.seq, reason: problem.reason)
                    }
                    going = try body(seq, bytes, archive.path)
                    return going
                }
                guard going else { return }
                if let problem = continuity.finish(through: last) {
                    throw StoreError.brokenSequence(
                        path: archive.path, seq: problem.seq,
                        reason: problem.reason + " (the archive should hold every record through seq \(facts.archivedThrough))")
                }
            }
        }
        // Records at or below the base may linger after an interrupted compaction: the
        // archive (or the base snapshot) stands for them.
        try forEachRawLogRecord(from: max(from, base + 1), through: through) { seq, bytes in
            try body(seq, bytes, path)
        }
    }

    // MARK: The log alone

    /// The log's records with seq in `from...through`, in order, without the archive's: for
    /// the store's own readers of the log (a read-only store's refresh).
    package func logRecords(from: UInt64 = 1, through: UInt64 = .max) throws -> [LogRecord] {
        var records: [LogRecord] = []
        try forEachLogRecord(from: from, through: through) { records.append($0); return true }
        return records
    }

    /// Calls `body` with each record of the log (not the archive) in `from...through`, in
    /// order, in one read transaction, until `body` returns false.
    package func forEachLogRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (LogRecord) throws -> Bool
    ) throws {
        try forEachRawLogRecord(from: from, through: through) { seq, bytes in
            try body(try Store.decodeRecord(seq: seq, bytes: bytes, in: path))
        }
    }

    /// Calls `body` with the seq and stored bytes of each record of the log in
    /// `from...through`. The bytes are valid only during the call. Checks each key (see
    /// ``SeqContinuity``): a key that is not 8 bytes, repeats or goes back, or a gap that
    /// neither a purge nor the compaction base explains, throws
    /// ``StoreError/Code/brokenSequence`` naming the seq, after `body` has had
    /// every record before it.
    package func forEachRawLogRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard from <= through else { return }
        let (facts, purged) = try factsAndGaps()
        var continuity = SeqContinuity(from: from, floor: facts.base, gaps: purged)
        try forEachUncheckedRawLogRecord(from: from, through: through) { seq, bytes in
            if let problem = continuity.accept(seq) {
                throw StoreError.brokenSequence(path: path, seq: problem.seq, reason: problem.reason)
            }
            return try body(seq, bytes)
        }
    }

    /// ``forEachRawLogRecord(from:through:_:)`` without the key checks, for `verify`, which
    /// reports every problem instead of stopping at the first.
    func forEachUncheckedRawLogRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard from <= through else { return }
        try environment.storeRead { txn in
            try txn.withCursor(log) { cursor in
                var lastSeen = from - 1
                var entry = try cursor.seek(atLeast: SeqKey(from).bytes)
                while let current = entry {
                    guard let key = SeqKey(bytes: current.key) else {
                        throw StoreError.brokenSequence(
                            path: path, seq: lastSeen + 1, reason: "the key after seq \(lastSeen) is \(current.key.count) bytes long, not 8")
                    }
                    lastSeen = key.seq
                    guard key.seq <= through, try body(key.seq, current.value) else { return }
                    entry = try cursor.next()
                }
            }
        }
    }
}
