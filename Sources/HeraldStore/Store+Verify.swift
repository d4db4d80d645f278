import HeraldProjection
import LMDB

extension StoreMaintenance {
    /// Checks everything the store holds without trusting any of it, as
    /// ``Store/verify(checkingSnapshots:progress:)`` does, on the store opened read-only and
    /// without replaying its log (so a damaged store can be verified) and with its data
    /// file's pages walked afresh (``Store/Options/walkVerdicts`` off). Runs beside writers.
    ///
    /// - Parameters:
    ///   - checkingSnapshots: when false, snapshots are neither checked nor used, except the
    ///     snapshot the kept history starts from.
    ///   - progress: called now and then (every 4,096 records) with the seq just checked and
    ///     the highest seq given out, for a progress display.
    /// - Returns: every problem found, with its seq; only a failure to read at all throws.
    public func verify(checkingSnapshots: Bool = true, progress: ((_ seq: UInt64, _ of: UInt64) -> Void)? = nil) throws
        -> VerifyReport
    {
        // The check reads the file itself: its pages are walked even if a verdict is remembered.
        try openReadOnly { $0.walkVerdicts = nil }.verify(checkingSnapshots: checkingSnapshots, progress: progress)
    }
}

extension Store {
    /// Checks everything the store holds without trusting any of it: the checksum and
    /// encoding of every log and archived record, that seqs run without holes (but the
    /// purged ranges and what compaction removed), and that every snapshot is intact and
    /// equal, byte for byte, to the state a replay of the history gives at its seq.
    ///
    /// Problems are reported, never thrown; only a failure to read at all throws. Open the
    /// store with ``Options/replayOnOpen`` off to verify one whose log is damaged.
    ///
    /// - Parameters:
    ///   - checkingSnapshots: when false, snapshots are neither checked nor used, except the
    ///     snapshot the kept history starts from.
    ///   - progress: called now and then (every 4,096 records) with the seq just checked and
    ///     the highest seq given out, for a progress display.
    public func verify(checkingSnapshots: Bool = true, progress: ((_ seq: UInt64, _ of: UInt64) -> Void)? = nil) throws -> VerifyReport {
        var run = VerifyRun(store: self, history: try history.facts())
        run.progress = progress
        run.report.purged = try self.history.bounds().purgedRanges
        run.report.highWater = try self.history.bounds().highWaterSeq
        run.report.base = run.history.base
        if checkingSnapshots { try run.loadSnapshots() }
        try run.prepareReplay()
        if try archiveIsLeftover() {
            run.problem(
                .archive, 0,
                "archive/ was left by an interrupted `compact --archive` before it recorded anything: the log still holds "
                    + "every record, and the next writable open (`herald ingest`, `herald compact`) removes it")
        } else if let archive = try archive() {
            run.scan(archive: archive)
        }
        run.scanLog()
        run.finish()
        // The audit index is checked against a rebuild when the records it derives from are sound.
        if run.report.problems.allSatisfy({ $0.location == .snapshot }) {
            run.report.problems += try auditIndex.problems()
        }
        run.report.notes += Self.pagesPastLastCommit(in: path + "/data.mdb", highWater: run.report.highWater)
        run.report.notes += try exportedRanges().map { range in
            "seqs \(range.first)…\(range.last) expired under archive retention: exported to \(range.directory)/\(range.file) "
                + "(\(range.records) records), then removed"
        }
        return run.report
    }
}

extension Store {
    /// A note when `file` holds pages written after its newest commit (see
    /// `DataFile.pagesPastLastCommit`): a commit whose meta page never reached the disk.
    static func pagesPastLastCommit(in file: String, highWater: UInt64) -> [String] {
        guard let data = try? DataFile(path: file), let newest = data.header().newest else { return [] }
        let pages = data.pagesPastLastCommit(newest)
        guard let first = pages.first, let last = pages.last else { return [] }
        return [
            "\(file): \(pages.count) page\(pages.count == 1 ? "" : "s") (\(first)…\(last)) written after the newest commit "
                + "(transaction \(newest.transactionId), last page \(newest.lastPage)): a commit whose meta page never reached "
                + "the disk, either interrupted before it was acknowledged or a lost last commit; if events acknowledged "
                + "after seq \(highWater) are missing, `herald salvage` recovers the records on those pages"
        ]
    }
}

/// The state of one ``Store/verify(checkingSnapshots:)`` pass.
private struct VerifyRun {
    let store: Store
    let history: Store.History
    var report = VerifyReport()
    var progress: ((UInt64, UInt64) -> Void)?
    private var accepted = 0
    /// Intact snapshots in seq order, with their payloads, waiting to be compared.
    var snapshots: [(seq: UInt64, payload: [UInt8])] = []
    var nextSnapshot = 0
    /// The replayed state, `nil` when there is no starting point; `replayTrusted` turns false
    /// after a damaged record, as the replay then differs from the true state.
    var replay: Projection?
    var replayFrom: UInt64 = 0
    var replayTrusted = true
    /// The next seq expected, for the contiguity check.
    var expected: UInt64 = 1

    init(store: Store, history: Store.History) {
        self.store = store
        self.history = history
    }

    mutating func problem(_ location: VerifyReport.Problem.Location, _ seq: UInt64, _ message: String) {
        report.problems.append(.init(location, seq: seq, message))
    }

    mutating func loadSnapshots() throws {
        guard let database = try store.existingAuxiliary(.snapshots) else { return }
        let configuration = store.options.projection
        let highWater = report.highWater
        var found: [(UInt64, Result<[UInt8], SnapshotEnvelope.Damage>)] = []
        try store.environment.storeRead { txn in
            for seq in try Store.snapshotSeqs(database, txn) {
                try SeqKey(seq).withBytes { key in
                    guard let bytes = try txn.get(database, key: key) else { return }
                    do {
                        let payload = try SnapshotEnvelope.check(bytes, expectedSeq: seq).payload
                        let isOrigin = seq > 0 && seq == history.origin
                        do throws(SnapshotError) {
                            _ = try Projection(
                                snapshot: UnsafeRawBufferPointer(rebasing: bytes[payload]), configuration: configuration,
                                checksumVerified: false, readingFormerFormats: isOrigin)
                            found.append((seq, .success(Array(bytes[payload]))))
                        } catch {
                            // A snapshot written before SEMANTICS 1.2 is not damage: it is
                            // superseded (a replay goes past it), so it is neither used nor compared.
                            if case .unsupportedVersion(let version) = error.reason, version < Projection.snapshotFormatVersion {
                                return
                            }
                            found.append((seq, .failure(.init(reason: "snapshot payload: \(error)"))))
                        }
                    } catch let damage as SnapshotEnvelope.Damage {
                        found.append((seq, .failure(damage)))
                    }
                }
            }
        }
        for (seq, result) in found {
            report.snapshotsChecked += 1
            switch result {
            case .success(let payload):
                if seq > highWater { problem(.snapshot, seq, "covers seqs beyond the last one given out (\(highWater))") }
                snapshots.append((seq, payload))
            case .failure(let damage):
                problem(.snapshot, seq, damage.reason)
            }
        }
    }

    /// Chooses where the replay starts: the empty state when the history is complete, else
    /// the base snapshot.
    mutating func prepareReplay() throws {
        if history.isComplete {
            replay = Projection(configuration: store.options.projection)
            return
        }
        expected = history.origin + 1
        replayFrom = history.origin
        switch try store.loadSnapshot(seq: history.origin) {
        case .success(let projection): replay = projection
        case .failure(let damage):
            // Reported once: loadSnapshots may have listed it already.
            if !report.problems.contains(where: { $0.location == .snapshot && $0.seq == history.origin }) {
                problem(.snapshot, history.origin, "start of the kept history: \(damage.reason)")
            }
        }
    }

    mutating func scan(archive: Archive) {
        var lastSeen: UInt64 = 0
        do {
            try archive.forEachRawRecord { seq, bytes in
                lastSeen = seq
                report.archivedRecordsChecked += 1
                let part = seq <= history.base && seq > history.origin
                accept(seq: seq, bytes: bytes, location: .archive, partOfHistory: part)
                return true
            }
        } catch {
            problem(.archive, lastSeen + 1, "cannot read the archive past here: \(error)")
        }
    }

    mutating func scanLog() {
        var lastSeen: UInt64 = 0
        do {
            try store.forEachUncheckedRawRecord { seq, bytes in
                lastSeen = seq
                report.recordsChecked += 1
                accept(seq: seq, bytes: bytes, location: .log, partOfHistory: seq > history.base)
                return true
            }
        } catch {
            problem(.log, lastSeen + 1, "cannot read the log past here: \(error)")
        }
    }

    /// Checks one stored record; when it belongs to the replayed history, checks the seqs
    /// before it, compares the snapshots it passes, and applies it.
    mutating func accept(seq: UInt64, bytes: UnsafeRawBufferPointer, location: VerifyReport.Problem.Location, partOfHistory: Bool) {
        accepted += 1
        if accepted & 4095 == 0 { progress?(seq, report.highWater) }
        let record: LogRecord?
        do {
            record = try LogRecord(seq: seq, bytes: bytes)
        } catch {
            problem(location, seq, "damaged record: \(error.reason)")
            record = nil
        }
        guard partOfHistory else { return }
        checkMissing(before: seq)
        expected = seq + 1
        compareSnapshots(before: seq)
        guard let record else {
            replayTrusted = false
            return
        }
        if seq > replayFrom { _ = replay?.apply(record.event, seq: seq) }
    }

    mutating func checkMissing(before seq: UInt64) {
        guard seq > expected else { return }
        var start = expected
        for range in report.purged where range.upperBound >= start && range.lowerBound < seq {
            if range.lowerBound > start { problem(.sequence, start, "seqs \(start)…\(range.lowerBound - 1) are missing") }
            start = max(start, range.upperBound + 1)
        }
        if start < seq { problem(.sequence, start, start == seq - 1 ? "seq \(start) is missing" : "seqs \(start)…\(seq - 1) are missing") }
    }

    mutating func compareSnapshots(before seq: UInt64) {
        while nextSnapshot < snapshots.count, snapshots[nextSnapshot].seq < seq {
            let snapshot = snapshots[nextSnapshot]
            nextSnapshot += 1
            guard snapshot.seq >= replayFrom, replayTrusted, let replay else { continue }
            report.snapshotsCompared += 1
            if replay.snapshot() != snapshot.payload {
                problem(.snapshot, snapshot.seq, "differs from the state a replay of the log gives at this seq")
            }
        }
    }

    mutating func finish() {
        checkMissing(before: report.highWater + 1)
        compareSnapshots(before: .max)
    }
}
