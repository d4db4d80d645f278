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

    /// Where ``event`` lies inside a record, for a ``ReplayBatch`` that lends them.
    static let eventOffset = MemoryLayout<PendingRecord>.offset(of: \.event)!
}

extension Store {
    /// Appends one event, applies it, and returns its seq and updates once it is durable
    /// (under the default durability).
    ///
    /// An invalid event throws ``StoreError/invalid(_:)`` and appends nothing.
    /// Concurrent callers share commits (group commit); each still returns only when its own
    /// event is committed.
    @discardableResult
    public func append(_ event: Event, source: Source = .library) throws -> Applied {
        // The batch path's steps for one event, without wrapping it in a batch first: that
        // copied the event twice more (each string retained and released), per durable call.
        try requireWritable()
        do {
            try event.validate()
            try source.validate()
        } catch {
            throw StoreError.invalid(error)
        }
        return try submit([PendingRecord(event: event, source: source)], wantsUpdates: true)!.applied[0]
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

    private func validated(_ batch: [(Event, Source)]) throws -> [PendingRecord] {
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

    private func submit(_ pending: [PendingRecord], wantsUpdates: Bool) throws -> GroupCommitter.Committed? {
        guard !pending.isEmpty else { return nil }
        return try committer.submit(pending, wantsUpdates: wantsUpdates) { requests in try commit(requests) }
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

    /// Commits the requests of a group whose records can have their seqs, and rejects the
    /// others alone: an import whose seqs do not follow the log's fails by itself, not the
    /// appends that share its group. Runs on the group leader only; throws when the commit
    /// fails, which fails the whole group.
    private func commit(_ requests: [GroupCommitter.Request]) throws -> [Result<GroupCommitter.Committed, any Error>] {
        let (seqs, rejected) = assignSeqs(requests)
        guard !rejected.isEmpty else { return try commit(requests, seqs: seqs).map { .success($0) } }
        let accepted = requests.indices.filter { rejected[$0] == nil }.map { requests[$0] }
        var committed = try (accepted.isEmpty ? [] : commit(accepted, seqs: seqs)).makeIterator()
        return requests.indices.map { index in rejected[index].map { .failure($0) } ?? .success(committed.next()!) }
    }

    /// The seqs of the records of `requests`, in queue order: the next ones, or an import's
    /// own, which must increase past the last; and, by index, the requests rejected (whose
    /// records take none) with the reason.
    private func assignSeqs(_ requests: [GroupCommitter.Request]) -> (seqs: [UInt64], rejected: [Int: any Error]) {
        var seqs: [UInt64] = []
        seqs.reserveCapacity(requests.reduce(0) { $0 + $1.payload.count })
        var rejected: [Int: any Error] = [:]
        var previous = lastSeq
        for (position, request) in requests.enumerated() {
            let start = (count: seqs.count, previous: previous)
            do {
                try request.payload.withUnsafeBufferPointer { records in
                    for index in records.indices {
                        let seq = records[index].seq ?? previous + 1
                        guard seq > previous else {
                            throw StoreError.outOfOrder(path: path, seq: seq, lastSeq: previous)
                        }
                        guard seq <= SeqKey.maximum else { throw StoreError.seqOutOfRange(path: path, seq: seq) }
                        seqs.append(seq)
                        previous = seq
                    }
                }
            } catch {
                rejected[position] = error
                seqs.removeSubrange(start.count...)
                previous = start.previous
            }
        }
        return (seqs, rejected)
    }

    /// Writes the records of `requests` under `seqs` in one transaction and applies them.
    ///
    /// A lone bulk request that wants no updates is replayed while a second thread writes it
    /// (``commitReplayingAlongside(_:seqs:)``). When the batch holds other callers' requests,
    /// one of them applies it to the projection meanwhile (see ``ApplyAhead``), so the
    /// projection work overlaps the fsync instead of following it.
    private func commit(_ requests: [GroupCommitter.Request], seqs: [UInt64]) throws -> [GroupCommitter.Committed] {
        let total = seqs.count
        if requests.count == 1, !requests[0].wantsUpdates, total >= Self.replayAlongsideMinimum,
            hasRoomToApplyAhead(recordCount: total)
        {
            return [try commitReplayingAlongside(requests[0], seqs: seqs)]
        }
        guard requests.count > 1 else {
            // Alone: no caller waits beside the leader to apply ahead (see `runAside`).
            try write([requests[0].payload], seqs: seqs)
            return didCommit(requests, seqs: seqs)
        }
        let ahead = ApplyAhead()
        let appliesAhead = hasRoomToApplyAhead(recordCount: total) && committer.runAside(in: requests) { [seqs] in
            // Let the leader reach its fsync first: when both threads share a core, the
            // projection work would otherwise delay the write it is meant to overlap.
            sched_yield()
            self.state.withLock { state in
                let batch = self.applyBatch(requests, seqs: seqs, to: &state)
                if ahead.awaitVerdict(batch.committed) { self.publish(batch.published, to: &state) }
            }
        }
        do {
            try write(requests.map { $0.payload }, seqs: seqs)
        } catch {
            guard appliesAhead else { throw error }
            ahead.settle(durable: false)
            // Waits for the applier to let go of the state, then replaces it.
            rebuildAfterFailedCommit()
            throw error
        }
        return appliesAhead ? ahead.settle(durable: true) : didCommit(requests, seqs: seqs)
    }

    /// Whether the map has room for a commit of `recordCount` records without growing, with a
    /// wide margin. Growing the map waits for every transaction of the process to end, and a
    /// `forEachRecord` closure (inside a read transaction) that reads the state would wait
    /// for the applier (or the leader replaying alongside, which holds the state lock too),
    /// which waits for the commit: so near a full map, batches are applied after their
    /// commit instead.
    private func hasRoomToApplyAhead(recordCount: Int) -> Bool {
        let info = environment.info()
        return info.usedBytes + max(4 << 20, recordCount << 10) <= info.mapSize
    }

    /// How far, at most, the data file is kept written ahead of the log (see
    /// `Transaction.preallocate(limit:)`): 1 MiB, a few hundred commits of a few events.
    static let preallocation = 1 << 20

    /// Encodes the records of `payloads` and commits them under `seqs` in one transaction.
    func write(_ payloads: [[PendingRecord]], seqs: [UInt64]) throws {
        let now = options.clock()
        var writer = ByteWriter(capacity: seqs.count * 128)
        var ends: [Int] = []
        ends.reserveCapacity(seqs.count)
        for payload in payloads {
            payload.withUnsafeBufferPointer { records in
                for index in records.indices {
                    LogRecord.encode(
                        event: records[index].event, recordedAt: records[index].recordedAt ?? now,
                        source: records[index].source, into: &writer)
                    ends.append(writer.bytes.count)
                }
            }
        }
        do {
            try environment.write { txn in
                txn.preallocate(limit: Self.preallocation)
                try writer.bytes.withUnsafeBytes { all in
                    var start = 0
                    for (end, seq) in zip(ends, seqs) {
                        let value = UnsafeRawBufferPointer(rebasing: all[start..<end])
                        try SeqKey(seq).withBytes { key in
                            try txn.put(databases.log, key: key, value: value, flags: .append)
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

    /// After a commit failed with its batch already applied ahead: rebuilds the in-memory
    /// state from the log, which does not hold the batch.
    private func rebuildAfterFailedCommit() {
        do {
            try recover()
        } catch {
            logger.error(
                "after a failed commit, the in-memory state could not be rebuilt; reopen the store",
                metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
