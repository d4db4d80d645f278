import HeraldEvents
import HeraldProjection
import LMDB

extension Store {
    /// Where a store's history begins and what of it survives: compaction moves the start
    /// (the base), the archive may keep what was removed, purge leaves gaps.
    struct History: Sendable, Hashable {
        /// The compaction base: records with seq ≤ base may be gone from the log, and the
        /// snapshot at `base` (kept by every pruning) stands for them. 0: never compacted.
        var base: UInt64 = 0
        /// The archive holds every record (but purged ones) in `origin+1...archivedThrough`.
        var archivedThrough: UInt64 = 0
        /// Where the readable history starts: records with seq ≤ origin were discarded on
        /// purpose (`compact --discard-history`), and the snapshot at `origin` (kept by every
        /// pruning) stands for them. 0: every record from seq 1 is readable (archive + log).
        var origin: UInt64 = 0

        /// Whether the archive and the log together hold every record from seq 1.
        var isComplete: Bool { origin == 0 }
    }

    /// The `meta` keys of ``History``, values in ASCII decimal.
    static let baseKey = Array("base".utf8)
    static let archivedKey = Array("archived".utf8)
    static let originKey = Array("origin".utf8)

    /// Reads the history facts from `meta`.
    func history() throws -> History {
        try environment.storeRead { txn in try Self.history(txn, meta: databases.meta, path: path) }
    }

    /// Reads the history facts from `meta` inside the caller's transaction; static, so that
    /// the ``SnapshotWriter`` can prune without the store.
    static func history(_ txn: borrowing Transaction, meta: Database, path: String) throws -> History {
        var history = History(
            base: try metaNumber(Self.baseKey, txn, meta: meta, path: path),
            archivedThrough: try metaNumber(Self.archivedKey, txn, meta: meta, path: path))
        if try txn.get(meta, key: Self.originKey) != nil {
            history.origin = try metaNumber(Self.originKey, txn, meta: meta, path: path)
        } else if history.base > 0 && history.archivedThrough < history.base {
            // A store written before `origin` existed: compacted without an archive at some
            // point, so the readable history starts at its base.
            history.origin = history.base
        }
        return history
    }

    /// The ASCII decimal number under `key` in `meta`; 0 when absent.
    static func metaNumber(_ key: [UInt8], _ txn: borrowing Transaction, meta: Database, path: String) throws -> UInt64 {
        guard let bytes = try txn.get(meta, key: key) else { return 0 }
        guard let value = UInt64(String(decoding: bytes, as: UTF8.self)) else {
            throw StoreError.unsupportedFormat(path: path, found: "meta `\(String(decoding: key, as: UTF8.self))` is not a number")
        }
        return value
    }

    /// Writes the history facts into `meta`, inside the caller's transaction.
    func setHistory(_ history: History, _ txn: borrowing Transaction) throws {
        try txn.put(databases.meta, key: Self.baseKey, value: Array(String(history.base).utf8))
        try txn.put(databases.meta, key: Self.archivedKey, value: Array(String(history.archivedThrough).utf8))
        try txn.put(databases.meta, key: Self.originKey, value: Array(String(history.origin).utf8))
    }

    /// The seq ranges that purge removed on purpose, in order (`gaps`: first → last seq).
    public func purgedRanges() throws -> [ClosedRange<UInt64>] {
        guard let database = try existingAuxiliary(.gaps) else { return [] }
        return try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                var ranges: [ClosedRange<UInt64>] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let first = SeqKey(bytes: current.key), let last = SeqKey(bytes: current.value), first.seq <= last.seq {
                        ranges.append(first.seq...last.seq)
                    }
                    entry = try cursor.next()
                }
                return ranges
            }
        }
    }

    /// The highest seq ever given out: the last record's, or more when purge removed the
    /// last records or compaction dropped the whole log. The next append gets one more.
    public func highWaterSeq() throws -> UInt64 {
        max(try committedLastSeq(), try history().base, try purgedRanges().last?.upperBound ?? 0)
    }

    /// The highest seq given out before `seq`: ``highWaterSeq()`` as it stood when `seq` was
    /// appended. Only later seqs can be appended, and compaction and purge run alone, so it
    /// does not change after that.
    func highWaterSeq(below seq: UInt64) throws -> UInt64 {
        let record = try environment.storeRead { txn in
            try txn.withCursor(databases.log) { cursor in
                let entry = try cursor.seek(atLeast: SeqKey(seq).bytes) == nil ? try cursor.last() : try cursor.previous()
                return entry.flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0
            }
        }
        let base = try history().base
        let purged = try purgedRanges().last { $0.upperBound < seq }?.upperBound ?? 0
        return max(record, base < seq ? base : 0, purged)
    }

    /// The archive, opened on first use; `nil` when the store has none (and `create` is false).
    func archive(create: Bool = false) throws -> Archive? {
        try archiveHandle.withLock { handle in
            if let handle { return handle }
            // A read-only store ignores what an interrupted first `compact --archive` left:
            // the history does not use it yet (a writable open removes it).
            if options.readOnly, !create, try archiveIsLeftover() { return nil }
            handle = try Archive.open(
                storePath: path, create: create, readOnly: options.readOnly, durability: options.durability,
                checksPages: options.checksPages, walkVerdicts: options.walkVerdicts)
            return handle
        }
    }

    /// Whether `DIR/archive/` exists but the history does not use it: never compacted, nothing
    /// recorded as archived. Only an interrupted first `compact --archive` leaves that (the
    /// log still holds every record), and the next writable open removes it.
    func archiveIsLeftover() throws -> Bool {
        guard FileSystem.exists(path + "/" + Archive.directoryName) else { return false }
        let history = try self.history()
        return history.base == 0 && history.archivedThrough == 0
    }

    /// Whether the store has an archive (`DIR/archive/`).
    public var hasArchive: Bool { (try? archive()) != nil }

    /// Calls `body` with each record in `from...through`, in order, until it returns false;
    /// with `includingArchive`, records that compaction moved to the archive come first, so
    /// the whole history is read. A damaged record throws naming its seq, after `body` has
    /// had every record before it. A long run is read and decoded on a second thread.
    /// `body` runs inside a read transaction: as with ``forEachRecord(from:through:_:)``, it
    /// must not wait for an append on another thread.
    public func forEachRecord(
        includingArchive: Bool, from: UInt64 = 1, through: UInt64 = .max, _ body: (LogRecord) throws -> Bool
    ) throws {
        try forEachDecodedRecord(
            includingArchive: includingArchive, from: from, through: through,
            decode: { seq, bytes, location in try Self.decodeRecord(seq: seq, bytes: bytes, in: location) },
            { record in try body(record) })
    }

    /// ``forEachRecord(includingArchive:from:through:_:)`` for the records of one account:
    /// every record's checksum is still checked (a damaged record of any account throws, as
    /// there), but only `account`'s are decoded, so that reading one account of a store of
    /// many costs little more than reading the bytes of the others.
    public func forEachRecord(
        includingArchive: Bool, from: UInt64 = 1, through: UInt64 = .max, account: String,
        _ body: (LogRecord) throws -> Bool
    ) throws {
        try forEachRecordOrSkip(includingArchive: includingArchive, from: from, through: through, account: account) { _, record in
            try record.map(body) ?? true
        }
    }

    /// ``forEachRecord(includingArchive:from:through:account:_:)``, also calling `body` with
    /// the seq alone (record `nil`) for each record of another account.
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
                return (seq, try Self.decodeRecord(seq: seq, bytes: bytes, in: location))
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
        let last = min(through, try committedLastSeq())
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
        let history = try self.history()
        let base = history.base
        // When the history says the archive holds what compaction removed, a read without
        // it would silently start after the base, so it must be there and whole. (When
        // compaction dropped records without an archive, the history is not complete and a
        // read starts after the base, as documented: callers start from the base snapshot,
        // or say so.)
        // The archive holds `origin+1...base` (records up to the origin were discarded on
        // purpose); a read from at or below the origin starts after it.
        let holdsArchived = history.origin < base
        if includingArchive, base > 0, from <= base {
            let archive = try archive()
            if archive == nil && holdsArchived {
                throw StoreError.missingArchive(path: path, through: history.archivedThrough)
            }
            if let archive, holdsArchived {
                var going = true
                let last = min(through, base)
                let first = max(from, history.origin + 1)
                var continuity = SeqContinuity(from: first, floor: history.origin, gaps: try purgedRanges())
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
                        reason: problem.reason + " (the archive should hold every record through seq \(history.archivedThrough))")
                }
            }
        }
        // Records at or below the base may linger after an interrupted compaction: the
        // archive (or the base snapshot) stands for them.
        try forEachRawRecord(from: max(from, base + 1), through: through) { seq, bytes in
            try body(seq, bytes, path)
        }
    }

    /// Decodes stored record `seq`, naming `location` (the environment's path) in the error.
    static func decodeRecord(seq: UInt64, bytes: UnsafeRawBufferPointer, in location: String) throws -> LogRecord {
        do {
            return try LogRecord(seq: seq, bytes: bytes)
        } catch {
            throw StoreError.damagedRecord(path: location, seq: seq, reason: error.reason)
        }
    }
}

extension Store {
    /// The seq through which the archive should hold the history, when `archive/` is missing
    /// although the history says it holds what compaction removed; `nil` otherwise. A state
    /// from a snapshot at or after the base needs no archive, but cannot be checked against
    /// the history before it.
    public func missingArchiveThrough() throws -> UInt64? {
        let history = try self.history()
        guard history.base > 0, history.origin < history.base else { return nil }
        return FileSystem.exists(path + "/" + Archive.directoryName + "/data.mdb") ? nil : history.archivedThrough
    }
}
