import Foundation
import LMDB

/// What ``StoreMaintenance/compact(through:discardingHistory:dryRun:)-6wdk0`` did, or would do.
public struct CompactionReport: Sendable, Hashable {
    /// Whether this describes a dry run: nothing was changed.
    public var dryRun = false
    /// Whether the dropped records were discarded for good (`--discard-history`) instead of
    /// moved into the archive.
    public var historyDiscarded = false
    /// The compaction base before: records up to it had already been dropped.
    public var previousBase: UInt64 = 0
    /// The new base: the seq of the snapshot that now stands for every record up to it.
    public var base: UInt64 = 0
    /// Log records dropped.
    public var recordsRemoved = 0
    /// Records copied into the archive first.
    public var recordsArchived = 0
    /// Bytes of the records dropped from the log (their stored values).
    public var bytesRemoved = 0
    /// Archived records discarded with the history (only with `discardingHistory`).
    public var archivedRecordsDiscarded = 0
    /// The snapshots deleted because the new base stands for them.
    public var snapshotsRemoved: [UInt64] = []
    /// The seqs dropped from the log: `previousBase+1...base`, or `nil` when nothing is.
    public var droppedRange: ClosedRange<UInt64>? { base > previousBase ? (previousBase + 1)...base : nil }
    /// The size of `data.mdb` before and after, in bytes.
    public var bytesBefore = 0
    /// The size of `data.mdb` after the compacting copy was swapped in, in bytes.
    public var bytesAfter = 0
}

extension StoreMaintenance {
    /// Moves the log records covered by a snapshot into the archive (or, when asked,
    /// discards them), then rewrites the data file without free pages. Takes the writer
    /// lock (a dry run does not).
    ///
    /// Crash-safe at every step: the archive commits before the log deletes; the new base is
    /// recorded before the first delete; the compacting copy is fsynced, then renamed over
    /// `data.mdb` (atomic), and an interrupted copy is removed at the next open. Readers that
    /// were open during the swap keep the old file until they reopen, read-only stores of this
    /// process included (compaction shares their environment, and stores opened after the
    /// swap open the new file).
    ///
    /// - Parameters:
    ///   - seq: the snapshot to compact up to (it becomes the base); default: the newest valid one.
    ///   - discardingHistory: drop the records for good instead of archiving them. The
    ///     snapshot at `seq` then stands for the whole history up to it: records already in
    ///     the archive up to `seq` are discarded too, and `replay`, `audit` and `state --at`
    ///     start there. Without it, every record stays readable (archive + log).
    ///   - dryRun: report what would be dropped, archived and deleted, and change nothing.
    /// - Returns: what was dropped, archived and deleted, and the data file's size before and after.
    @discardableResult
    public func compact(through seq: UInt64? = nil, discardingHistory: Bool = false, dryRun: Bool = false) throws
        -> CompactionReport
    {
        let before = FileSystem.size(path + "/data.mdb")
        if dryRun {
            var report = try openReadOnly().planCompaction(through: seq, discardingHistory: discardingHistory)
            report.dryRun = true
            report.bytesBefore = before
            report.bytesAfter = before
            return report
        }
        var report = try withExclusiveStore { store in
            try store.dropCoveredRecords(through: seq, discardingHistory: discardingHistory)
        }
        report.bytesBefore = before
        report.bytesAfter = FileSystem.size(path + "/data.mdb")
        return report
    }

    /// Compacts like ``compact(through:discardingHistory:dryRun:)``, suspending (not
    /// blocking) the caller meanwhile.
    ///
    /// - Parameters:
    ///   - seq: the snapshot to compact up to; default: the newest valid one.
    ///   - discardingHistory: drop the records for good instead of archiving them.
    ///   - dryRun: report what would be done, and change nothing.
    @discardableResult
    public func compact(through seq: UInt64? = nil, discardingHistory: Bool = false, dryRun: Bool = false) async throws
        -> CompactionReport
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try compact(through: seq, discardingHistory: discardingHistory, dryRun: dryRun)
                })
            }
        }
    }
}

extension Store {
    /// The directory beside a data file where its compacting copy is written before the swap.
    static let compactionDirectory = "compact.tmp"
    /// Records moved or deleted per transaction, so no transaction grows without bound.
    static let compactionChunk = 50_000

    /// Removes compacting copies that an interrupted compaction left (at every writable open).
    static func removeCompactionLeftovers(_ path: String) throws {
        try FileSystem.remove(path + "/" + compactionDirectory)
        try FileSystem.remove(path + "/" + Archive.directoryName + "/" + compactionDirectory)
    }

    /// What compacting through `requested` would do, computed without changing anything:
    /// the target base, the records and bytes it drops, the archived records a discard takes
    /// with it, and the snapshots it deletes.
    func planCompaction(through requested: UInt64?, discardingHistory: Bool) throws -> CompactionReport {
        let history = try self.history.facts()
        var report = CompactionReport(previousBase: history.base, base: history.base)
        report.historyDiscarded = discardingHistory
        let target: UInt64
        if let requested {
            if case .failure(let damage) = try loadSnapshot(seq: requested) {
                throw StoreError.damagedSnapshot(path: path, seq: requested, reason: damage.reason)
            }
            target = requested
        } else {
            guard let newest = try newestValidSnapshot(in: history.base...max(history.base, try self.history.bounds().highWaterSeq)) else {
                return report
            }
            target = newest.seq
        }
        guard target > history.base else { return report }
        report.base = target
        try self.history.forEachRawLogRecord(from: history.base + 1, through: target) { _, bytes in
            report.recordsRemoved += 1
            report.bytesRemoved += bytes.count
            return true
        }
        if discardingHistory {
            report.archivedRecordsDiscarded = try archive()?.recordCount(through: target) ?? 0
        } else {
            report.recordsArchived = report.recordsRemoved
        }
        // The new base stands for every snapshot before it, but the start of the kept
        // history (its origin), which a replay of archived records begins from.
        let keep: UInt64 = discardingHistory ? target : history.origin
        report.snapshotsRemoved = try snapshots.seqs().filter { $0 < target && $0 != keep }
        return report
    }

    /// The logical half of compaction: archive (or discard) and delete the records up to
    /// the chosen snapshot, which becomes the base.
    func dropCoveredRecords(through requested: UInt64?, discardingHistory: Bool) throws -> CompactionReport {
        let history = try self.history.facts()
        var report = try planCompaction(through: requested, discardingHistory: discardingHistory)
        report.recordsRemoved = 0
        report.recordsArchived = 0
        report.archivedRecordsDiscarded = 0
        guard report.base > history.base else {
            if requested == nil { logger.info("no snapshot to compact to; only reclaiming space") }
            return report
        }
        let target = report.base
        var next = history
        if discardingHistory {
            next.origin = target
        } else {
            report.recordsArchived = try archiveRecords(after: history.base, through: target)
        }
        next.archivedThrough = target
        next.base = target
        let snapshots = try auxiliary(.snapshots)
        // The new history commits first: from then on, archived records at or below the
        // origin are no longer part of it, so a crash below leaves leftovers, not a gap.
        try environment.storeWrite { txn in
            try setHistory(next, txn)
            for seq in report.snapshotsRemoved {
                try txn.delete(snapshots, key: SeqKey(seq).bytes)
            }
        }
        if discardingHistory, let archive = try archive() {
            // The snapshot at the target stands for everything up to it, archive included.
            var seqs: [UInt64] = []
            try archive.forEachRawRecord(through: target) { seq, _ in
                seqs.append(seq)
                return true
            }
            for chunk in seqs.chunks(of: Self.compactionChunk) {
                report.archivedRecordsDiscarded += try archive.delete(chunk)
            }
        }
        while true {
            let deleted = try deleteLogRecords(through: target, limit: Self.compactionChunk)
            if deleted == 0 { break }
            report.recordsRemoved += deleted
        }
        report.base = target
        logger.info(
            "compacted",
            metadata: ["base": "\(target)", "removed": "\(report.recordsRemoved)", "discarded": "\(discardingHistory)"])
        return report
    }

    /// Copies the log records in `after+1...through` into the archive, in chunks; each chunk
    /// is durable before the next is read.
    private func archiveRecords(after: UInt64, through: UInt64) throws -> Int {
        guard let archive = try self.archive(create: true) else { return 0 }
        var from = after + 1
        var total = 0
        while from <= through {
            var chunk: [(seq: UInt64, bytes: [UInt8])] = []
            try self.history.forEachRawLogRecord(from: from, through: through) { seq, bytes in
                chunk.append((seq, Array(bytes)))
                return chunk.count < Self.compactionChunk
            }
            guard let last = chunk.last else { break }
            try archive.store(chunk)
            total += chunk.count
            from = last.seq + 1
        }
        return total
    }

    /// Deletes up to `limit` of the first log records with seq ≤ `through`, in one commit.
    private func deleteLogRecords(through: UInt64, limit: Int) throws -> Int {
        try environment.storeWrite { txn in
            try txn.withCursor(databases.log) { cursor in
                var deleted = 0
                while deleted < limit, let entry = try cursor.first(), let key = SeqKey(bytes: entry.key), key.seq <= through {
                    try cursor.deleteCurrent()
                    deleted += 1
                }
                return deleted
            }
        }
    }
}
