import Foundation
import HeraldEvents
import HeraldProjection
import LMDB

/// An event waiting to be appended, already validated.
struct PendingRecord: Sendable {
    var event: Event
    var source: Source
    /// Set by imports only: the record keeps its original seq and time.
    var seq: UInt64? = nil
    var recordedAt: Int64? = nil
    /// Read from the replicated log (``Store/appendReplicated(_:)``): not sent back to it.
    var replicated = false
}

extension Store {
    /// Appends one event, applies it, and returns its seq and updates once it is durable
    /// (under the default durability).
    ///
    /// An invalid event throws ``StoreError/Code/invalid`` and appends nothing.
    /// Concurrent callers share commits (group commit); each still returns only when its own
    /// event is committed.
    @discardableResult
    public func append(_ event: Event, source: Source = .library) throws -> Applied {
        // The batch path's steps for one event, without wrapping it in a batch first: that
        // copied the event twice more (each string retained and released), per durable call.
        try submit([validated(event, source: source)], wantsUpdates: true)!.applied[0]
    }

    /// Appends a batch atomically, in one commit: either every event is appended, in order,
    /// with consecutive seqs, or (when one is invalid or the commit fails) none is.
    /// Returns the events applied, in order.
    @discardableResult
    public func append(contentsOf batch: [(Event, Source)]) throws -> [Applied] {
        try submit(validated(batch), wantsUpdates: true)?.applied ?? []
    }

    /// Appends a batch atomically, like `append(contentsOf:)`, and returns only the seqs
    /// it got: the projection is brought up to date without computing each event's updates
    /// (unless someone follows ``appliedEvents()``). For bulk loads such as `herald ingest`.
    @discardableResult
    public func appendBatch(_ batch: [(Event, Source)]) throws -> ClosedRange<UInt64>? {
        guard let committed = try submit(validated(batch), wantsUpdates: false) else { return nil }
        return committed.firstSeq...(committed.firstSeq + UInt64(batch.count) - 1)
    }

    /// One event to append, validated; throws ``StoreError/Code/invalid``.
    func validated(_ event: Event, source: Source) throws -> PendingRecord {
        try requireWritable()
        do {
            try event.validate()
            try source.validate()
        } catch {
            throw StoreError.invalid(error)
        }
        return PendingRecord(event: event, source: source)
    }

    func validated(_ batch: [(Event, Source)]) throws -> [PendingRecord] {
        try requireWritable()
        var pending: [PendingRecord] = []
        pending.reserveCapacity(batch.count)
        for index in batch.indices {
            try Self.check(batch[index].0, source: batch[index].1, at: index)
            pending.append(PendingRecord(event: batch[index].0, source: batch[index].1))
        }
        return pending
    }

    /// Throws ``StoreError/readOnly(path:)`` when the store was opened read-only: before any
    /// write transaction, which a read-only environment refuses with a trap.
    func requireWritable() throws {
        guard !options.readOnly else { throw StoreError.readOnly(path: path) }
        if isClosed { throw StoreError.closed(path: path) }
    }

    /// Validates `event` and its `source`, the `index`th of its batch; throws
    /// ``StoreError/invalidEvent(index:_:)``. A source is checked too: a record it cannot
    /// be encoded in would read back as damaged, and fail every later open.
    private static func check(_ event: Event, source: Source, at index: Int) throws {
        do {
            try event.validate()
            try source.validate()
        } catch {
            throw StoreError.invalidEvent(index: index, error)
        }
    }

    /// Appends `pending` and waits until it is committed and applied: on this thread when
    /// nobody else commits, else by the commit thread.
    private func submit(_ pending: [PendingRecord], wantsUpdates: Bool) throws -> AppendRequest.Committed? {
        guard !pending.isEmpty else { return nil }
        let waiter = AppendRequest.Waiter()
        let request = AppendRequest(pending, wantsUpdates: wantsUpdates, reply: .waiter(waiter))
        if environment.isInsideTransactionOnThisThread {
            // Committed by the commit thread: a write transaction here could not grow the map.
            try requireRoomWithoutGrowing(for: pending)
            appendThreads.submit(request, closed: StoreError.closed(path: path))
            return try waiter.wait()
        }
        return try appendThreads.append(request, waiter: waiter, closed: StoreError.closed(path: path))
    }

    /// Throws `MDB_MAP_FULL` unless the map has room for `pending` with a wide margin. For a
    /// caller inside a transaction of the store (an append from a `forEachRecord` closure):
    /// growing the map waits for every transaction to end, its own too, so a commit that had
    /// to grow the map would wait for the caller, which waits for the commit.
    private func requireRoomWithoutGrowing(for pending: [PendingRecord]) throws {
        var writer = ByteWriter(capacity: pending.count * 128)
        for record in pending {
            LogRecord.encode(event: record.event, recordedAt: record.recordedAt ?? 0, source: record.source, into: &writer)
        }
        let info = environment.info()
        guard info.usedBytes + max(4 << 20, 2 * writer.bytes.count + pending.count << 10) > info.mapSize else { return }
        throw StoreError.lmdb(
            LMDBError(
                code: LMDBError.mapFull, operation: "append (the map must grow, but this thread is inside a transaction)",
                path: path))
    }

    /// Queues `pending` for the commit thread and suspends until it is committed and applied.
    func submit(_ pending: [PendingRecord], wantsUpdates: Bool) async throws -> AppendRequest.Committed? {
        guard !pending.isEmpty else { return nil }
        return try await withCheckedThrowingContinuation { continuation in
            appendThreads.submit(
                AppendRequest(pending, wantsUpdates: wantsUpdates, reply: .continuation(continuation)), closed: StoreError.closed(path: path))
        }
    }

    /// Appends records exported from another store, keeping their seqs, recorded times and
    /// sources (`herald import`). Seqs must increase past ``lastSeq``; the seqs they skip
    /// (an export of one account, or of a purged store) are recorded as gaps, as purge's
    /// are, so that `verify` accepts them; appends committed meanwhile are never among them.
    @discardableResult
    public func importRecords(_ records: [LogRecord]) throws -> [Applied] {
        try requireWritable()
        var pending: [PendingRecord] = []
        for (index, record) in records.enumerated() {
            try Self.check(record.event, source: record.source, at: index)
            pending.append(PendingRecord(event: record.event, source: record.source, seq: record.seq, recordedAt: record.recordedAt))
        }
        let applied = try submit(pending, wantsUpdates: true)?.applied ?? []
        let skipped = try skippedSeqs(by: applied)
        if !skipped.isEmpty {
            // After the records: a crash in between leaves gaps that verify reports, never a
            // gap over seqs that were not imported.
            let gaps = try auxiliary(.gaps)
            try environment.storeWrite { txn in
                for range in skipped { try txn.put(gaps, key: SeqKey(range.lowerBound).bytes, value: SeqKey(range.upperBound).bytes) }
            }
        }
        return applied
    }

    /// Appends records read from the replicated log (``Options/replication``), keeping their
    /// seqs, recorded times and sources: the catch-up of a node and the records a follower
    /// applies. Each must decode and encode again to exactly its bytes, so that the local log
    /// holds the same bytes; seqs must follow ``lastSeq``. They are not sent to the
    /// replication.
    @discardableResult
    package func appendReplicated(_ records: [(seq: UInt64, bytes: [UInt8])]) throws -> [Applied] {
        try requireWritable()
        var pending: [PendingRecord] = []
        pending.reserveCapacity(records.count)
        for (seq, bytes) in records {
            let record: LogRecord
            do {
                record = try bytes.withUnsafeBytes { try LogRecord(seq: seq, bytes: $0) }
            } catch {
                throw StoreError.damagedRecord(path: path, seq: seq, reason: "replicated record: \(error)")
            }
            guard record.encoded == bytes else {
                throw StoreError.damagedRecord(path: path, seq: seq, reason: "replicated record does not encode again to its bytes")
            }
            pending.append(
                PendingRecord(event: record.event, source: record.source, seq: seq, recordedAt: record.recordedAt, replicated: true))
        }
        return try submit(pending, wantsUpdates: true)?.applied ?? []
    }

    /// The seqs that committed imported records skipped: what lies between each and the seq
    /// given out before it. Read after the commit, since appends of other callers may have
    /// been committed between an import's call and its records.
    private func skippedSeqs(by imported: [Applied]) throws -> [ClosedRange<UInt64>] {
        guard let first = imported.first else { return [] }
        var skipped: [ClosedRange<UInt64>] = []
        var previous = try highWaterSeq(below: first.seq)
        for record in imported {
            if record.seq > previous + 1 { skipped.append((previous + 1)...(record.seq - 1)) }
            previous = record.seq
        }
        return skipped
    }
}

extension AppendEngine {
    /// Gives the records of `requests` their seqs, in queue order, after `lastSeq`: the next
    /// ones, or an import's own, which must increase past the last. A request whose records
    /// cannot have theirs is rejected with the reason, alone: an import whose seqs do not
    /// follow the log's fails by itself, not the appends committed with it. Runs on whichever
    /// thread holds the commit role, which answers the rejected requests.
    func assignSeqs(_ requests: [AppendRequest], after lastSeq: UInt64) -> (CommittedBatch, rejected: [(AppendRequest, any Error)]) {
        var batch = CommittedBatch(requests: [], seqs: [])
        var rejected: [(AppendRequest, any Error)] = []
        batch.requests.reserveCapacity(requests.count)
        batch.seqs.reserveCapacity(requests.reduce(0) { $0 + $1.records.count })
        var previous = lastSeq
        for request in requests {
            let start = (count: batch.seqs.count, previous: previous)
            do {
                try request.records.withUnsafeBufferPointer { records in
                    for index in records.indices {
                        let seq = records[index].seq ?? previous + 1
                        guard seq > previous else {
                            throw StoreError.outOfOrder(path: path, seq: seq, lastSeq: previous)
                        }
                        guard seq <= SeqKey.maximum else { throw StoreError.seqOutOfRange(path: path, seq: seq) }
                        batch.seqs.append(seq)
                        previous = seq
                    }
                }
                batch.requests.append(request)
            } catch {
                batch.seqs.removeSubrange(start.count...)
                previous = start.previous
                rejected.append((request, error))
            }
        }
        return (batch, rejected)
    }

    /// How far, at most, the data file is kept written ahead of the log (see
    /// `Transaction.preallocate(limit:)`): 1 MiB, a few hundred commits of a few events.
    static let preallocation = 1 << 20

    /// Encodes the records of `batch` and commits them under its seqs in one transaction (and
    /// syncs it, under the default durability). Runs on whichever thread holds the commit role.
    func write(_ batch: CommittedBatch) throws {
        guard !batch.seqs.isEmpty else { return }
        let seqs = batch.seqs
        let now = options.clock()
        var writer = ByteWriter(capacity: seqs.count * 128)
        var ends: [Int] = []
        ends.reserveCapacity(seqs.count)
        for request in batch.requests {
            request.records.withUnsafeBufferPointer { records in
                for index in records.indices {
                    LogRecord.encode(
                        event: records[index].event, recordedAt: records[index].recordedAt ?? now,
                        source: records[index].source, into: &writer)
                    ends.append(writer.bytes.count)
                }
            }
        }
        if let replication = options.replication {
            // First there, then here: a record the replicated log lacks could never be repaired.
            let records = replicated(batch, bytes: writer.bytes, ends: ends)
            if records.count > 0 { try replication.commit(records) }
        }
        do {
            try environment.write { txn in
                txn.preallocate(limit: Self.preallocation)
                try writer.bytes.withUnsafeBytes { all in
                    var start = 0
                    for (end, seq) in zip(ends, seqs) {
                        let value = UnsafeRawBufferPointer(rebasing: all[start..<end])
                        try SeqKey(seq).withBytes { key in
                            try txn.put(log, key: key, value: value, flags: .append)
                        }
                        start = end
                    }
                }
                try options.commitFault?()
            }
        } catch let error as LMDBError {
            throw StoreError.lmdb(error)
        }
    }

    /// The records of `batch` the replication has not got yet: all but those read from it.
    private func replicated(_ batch: CommittedBatch, bytes: [UInt8], ends: [Int]) -> ReplicatedRecords {
        let fromLog = batch.requests.flatMap { $0.records.map(\.replicated) }
        guard fromLog.contains(true) else { return ReplicatedRecords(seqs: batch.seqs, bytes: bytes, ends: ends) }
        var kept = ReplicatedRecords(seqs: [], bytes: [], ends: [])
        for index in fromLog.indices where !fromLog[index] {
            kept.seqs.append(batch.seqs[index])
            kept.bytes.append(contentsOf: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
            kept.ends.append(kept.bytes.count)
        }
        return kept
    }
}
