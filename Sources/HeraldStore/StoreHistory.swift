import Dispatch
import HeraldProjection
import LMDB
import Synchronization

/// The readable history of a store: the records compaction moved to the archive, then the
/// log's, with the facts that bound it (``HistoryBounds``).
///
/// Reach it as ``Store/history``. There is one way to read records: by seq range, archive
/// first, as an array (``records(from:through:account:limit:)-2qcfk``, with a limit for paging) or
/// one record at a time (``forEach(from:through:account:_:)``, which can stop early); the
/// array also `async`. Records that compaction dropped without an archive, or that purge removed,
/// are not there: ``bounds()`` says where the readable history starts and which seqs purge
/// took.
///
/// ```swift
/// let store = try Store(path: "/path/to/herald.db")
/// var from = try store.history.bounds().firstReadableSeq
/// while case let page = try store.history.records(from: from, limit: 500), let last = page.last {
///     for record in page { print(record.seq, record.event.account) }
///     from = last.seq + 1
/// }
/// ```
public final class StoreHistory: Sendable {
    /// The store directory.
    let path: String
    let options: Store.Options
    let environment: Environment
    /// seq (8 bytes BE) → log record.
    let log: Database
    /// name → value: the history facts (`Store.History`) among the store-wide facts.
    let meta: Database
    /// The store's auxiliary handles, for `gaps` (the purged ranges).
    let auxiliaryHandles: Store.AuxiliaryHandles
    /// The archive environment (`DIR/archive/`), opened on first use; see `Archive`.
    let archiveHandle = Mutex<Archive?>(nil)
    /// Where the `async` reads run (the store's blocking queue).
    let blockingQueue: DispatchQueue

    init(
        path: String, options: Store.Options, environment: Environment, log: Database, meta: Database,
        auxiliaryHandles: Store.AuxiliaryHandles, blockingQueue: DispatchQueue
    ) {
        self.path = path
        self.options = options
        self.environment = environment
        self.log = log
        self.meta = meta
        self.auxiliaryHandles = auxiliaryHandles
        self.blockingQueue = blockingQueue
    }

    // MARK: Bounds

    /// Where the history starts and ends, and what of it is missing on purpose, read in one
    /// read transaction (so a read-only store sees other processes' commits).
    public func bounds() throws -> HistoryBounds {
        let gaps = try auxiliaryHandles.open(.gaps, create: false, in: environment)
        let archiveOpen = archiveHandle.withLock { $0 != nil }
        let archiveFound = FileSystem.exists(path + "/" + Archive.directoryName + "/data.mdb")
        return try environment.storeRead { txn in
            let facts = try Store.history(txn, meta: meta, path: path)
            // As `archive()` finds it, without opening it: a read-only store ignores what an
            // interrupted first `compact --archive` left (see `archiveIsLeftover()`).
            let leftover = options.readOnly && facts.base == 0 && facts.archivedThrough == 0
            let hasArchive = archiveOpen || (archiveFound && !leftover)
            let purged = try gaps.map { try Self.purgedRanges(txn, gaps: $0) } ?? []
            let (first, last) = try txn.withCursor(log) { cursor in
                (try cursor.first().flatMap { SeqKey(bytes: $0.key)?.seq }, try cursor.last().flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0)
            }
            return HistoryBounds(
                firstSeqInLog: first, lastSeqInLog: last, recordCountInLog: try txn.count(log),
                highWaterSeq: max(last, facts.base, purged.last?.upperBound ?? 0),
                droppedThrough: facts.isComplete ? nil : facts.origin, purgedRanges: purged, hasArchive: hasArchive)
        }
    }

    /// The seq through which the archive should hold the history, when `archive/` is missing
    /// although the history says it holds what compaction removed; `nil` otherwise. A state
    /// from a snapshot at or after the compaction base needs no archive, but cannot be checked
    /// against the history before it.
    public func missingArchiveThrough() throws -> UInt64? {
        let facts = try self.facts()
        guard facts.base > 0, facts.origin < facts.base else { return nil }
        return FileSystem.exists(path + "/" + Archive.directoryName + "/data.mdb") ? nil : facts.archivedThrough
    }

    /// The seq of the last record before the first one recorded after `time`, or `nil` when
    /// the first record is already later: the history as it stood at `time`.
    ///
    /// With a clock that never goes back this is the last record recorded at or before
    /// `time`. After the clock went back, records stamped earlier but appended after the
    /// first later one are left out, since they came after `time` in fact.
    ///
    /// - Parameter time: Milliseconds since the epoch.
    public func lastSeq(recordedAtOrBefore time: Int64) throws -> UInt64? {
        var found: UInt64?
        try forEach { record in
            guard record.recordedAt <= time else { return false }
            found = record.seq
            return true
        }
        return found
    }

    /// The history facts in `meta`: compaction base, archived-through seq, origin.
    func facts() throws -> Store.History {
        try environment.storeRead { txn in try Store.history(txn, meta: meta, path: path) }
    }

    /// The history facts and the purged ranges, in one read transaction.
    func factsAndGaps() throws -> (facts: Store.History, purged: [ClosedRange<UInt64>]) {
        let gaps = try auxiliaryHandles.open(.gaps, create: false, in: environment)
        return try environment.storeRead { txn in
            (try Store.history(txn, meta: meta, path: path), try gaps.map { try Self.purgedRanges(txn, gaps: $0) } ?? [])
        }
    }

    /// The seq ranges in `gaps` (first → last seq), in order.
    static func purgedRanges(_ txn: borrowing Transaction, gaps: Database) throws -> [ClosedRange<UInt64>] {
        try txn.withCursor(gaps) { cursor in
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

    /// The seq of the last record in the log, 0 when it is empty.
    func lastSeqInLog() throws -> UInt64 {
        try environment.storeRead { txn in
            try txn.withCursor(log) { cursor in try cursor.last().flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0 }
        }
    }

    /// The highest seq given out before `seq`: the high-water seq as it stood when `seq` was
    /// appended. Only later seqs can be appended, and compaction and purge run alone, so it
    /// does not change after that.
    func highWaterSeq(below seq: UInt64) throws -> UInt64 {
        let record = try environment.storeRead { txn in
            try txn.withCursor(log) { cursor in
                let entry = try cursor.seek(atLeast: SeqKey(seq).bytes) == nil ? try cursor.last() : try cursor.previous()
                return entry.flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0
            }
        }
        let (facts, purgedRanges) = try factsAndGaps()
        let purged = purgedRanges.last { $0.upperBound < seq }?.upperBound ?? 0
        return max(record, facts.base < seq ? facts.base : 0, purged)
    }

    // MARK: The archive

    /// The archive, opened on first use; `nil` when the store has none (and `create` is false).
    func archive(create: Bool = false) throws -> Archive? {
        try archiveHandle.withLock { handle in
            if let handle { return handle }
            // A read-only store ignores what an interrupted first `compact --archive` left:
            // the history does not use it yet (a writable open removes it).
            if options.readOnly, !create, try archiveIsLeftover() { return nil }
            handle = try Archive.open(
                storePath: path, create: create, readOnly: options.readOnly, durability: options.durability,
                checksPages: options.checksPages, walkVerdicts: options.walkVerdicts,
                withoutLockFile: options.withoutLockFile)
            return handle
        }
    }

    /// Releases the archive's environment, if it was opened (``Store/close()``).
    func releaseArchive() {
        archiveHandle.withLock { _ = $0?.environment.release() }
    }

    /// Whether `DIR/archive/` exists but the history does not use it: never compacted, nothing
    /// recorded as archived. Only an interrupted first `compact --archive` leaves that (the
    /// log still holds every record), and the next writable open removes it.
    func archiveIsLeftover() throws -> Bool {
        guard FileSystem.exists(path + "/" + Archive.directoryName) else { return false }
        let facts = try self.facts()
        return facts.base == 0 && facts.archivedThrough == 0
    }
}

/// Where a store's history starts and ends, and what of it is missing on purpose: the
/// durable facts, read together by ``StoreHistory/bounds()``.
///
/// The store's one last seq is ``Store/lastSeq``, the seq of the state applied in memory;
/// these are what is on disk.
public struct HistoryBounds: Sendable, Hashable {
    /// The seq of the first record in the log (compaction moves the start), `nil` when the
    /// log is empty.
    public let firstSeqInLog: UInt64?
    /// The seq of the last record in the log, 0 when the log is empty.
    public let lastSeqInLog: UInt64
    /// The number of records in the log (the archive's are not counted).
    public let recordCountInLog: Int
    /// The highest seq ever given out: the last record's, or more when purge removed the
    /// last records or compaction dropped the whole log. The next append gets one more.
    public let highWaterSeq: UInt64
    /// The seq through which compaction dropped the history without an archive (replays of
    /// later points start from its snapshot; earlier points cannot be rebuilt); `nil` when
    /// every record from seq 1 is still readable but for purged ones.
    public let droppedThrough: UInt64?
    /// The seq ranges that purge removed on purpose, in order.
    public let purgedRanges: [ClosedRange<UInt64>]
    /// Whether the store has an archive (`DIR/archive/`) that its history reads.
    public let hasArchive: Bool

    /// The first seq of the readable history: one after ``droppedThrough``, else 1.
    public var firstReadableSeq: UInt64 { (droppedThrough ?? 0) + 1 }
}

// The snapshots a replay starts from: the state after a seq of this history.
extension StoreHistory {
    /// The seqs of the stored snapshots, oldest first (``Snapshots/seqs()``).
    func snapshotSeqs() throws -> [UInt64] {
        guard let database = try auxiliaryHandles.open(.snapshots, create: false, in: environment) else { return [] }
        return try environment.storeRead { txn in try Store.snapshotSeqs(database, txn) }
    }

    /// Reads and checks the snapshot stored under `seq`: envelope, checksum, payload.
    /// With `configuration`, the projection runs with it instead of the store's; with
    /// `onlyAccount`, it holds that account alone and the others are not decoded.
    func loadSnapshot(
        seq: UInt64, configuration: Projection.Configuration? = nil, onlyAccount: String? = nil
    ) throws -> Result<Projection, SnapshotEnvelope.Damage> {
        guard let database = try auxiliaryHandles.open(.snapshots, create: false, in: environment) else {
            return .failure(.init(reason: "no snapshot database"))
        }
        let configuration = configuration ?? options.projection
        // The snapshot at the start of the kept history stands for records that are gone:
        // written before SEMANTICS 1.2, it is carried into 1.2 rather than refused.
        let former = try seq > 0 && seq == facts().origin
        return try environment.storeRead { txn in
            try SeqKey(seq).withBytes { key in
                guard let bytes = try txn.get(database, key: key) else {
                    return .failure(.init(reason: "no snapshot at seq \(seq)"))
                }
                return Store.decodeSnapshot(
                    bytes, seq: seq, configuration: configuration, onlyAccount: onlyAccount, readingFormerFormats: former)
            }
        }
    }

    /// The newest snapshot with seq in `range` that passes every check; each one skipped is
    /// logged as a warning. `nil` when none is usable.
    func newestValidSnapshot(
        in range: ClosedRange<UInt64>, configuration: Projection.Configuration? = nil, onlyAccount: String? = nil
    ) throws -> (seq: UInt64, projection: Projection)? {
        for seq in try snapshotSeqs().reversed() where range.contains(seq) {
            switch try loadSnapshot(seq: seq, configuration: configuration, onlyAccount: onlyAccount) {
            case .success(let projection):
                return (seq, projection)
            case .failure(let damage):
                options.logger.warning(
                    "skipping unusable snapshot", metadata: ["path": "\(path)", "seq": "\(seq)", "reason": "\(damage.reason)"])
            }
        }
        return nil
    }
}
