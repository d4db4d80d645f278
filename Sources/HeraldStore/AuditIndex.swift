import HeraldEvents
import HeraldProjection
import LMDB

/// The audit index (its `auditTargets` and `auditSeqs` databases, encoded as
/// `AuditIndex+Encoding.swift` says): for each target an account's events changed, the first
/// and last seq that changed it, and each account's seqs, so that an audit of one target and
/// a `projection(at:account:useSnapshots:)` of one account read only the events they need.
///
/// Reach it through ``Store/auditIndex``. A store gets one when asked (`herald index`):
/// ``catchUp(starting:)`` with `starting` builds it, and later catch-ups keep it up.
/// Reading APIs use it only when it covers the whole log, and otherwise replay.
///
/// ```swift
/// let store = try Store(path: "/path/to/herald.db")
/// try store.auditIndex.catchUp(starting: true)
/// let report = try store.auditReport(account: "tg:1", target: .notification(42), listingUnchanged: false)
/// print(try store.auditIndex.statistics().through)
/// ```
public struct AuditIndex: Sendable {
    /// The history it indexes and reads: records (archive, then log), snapshots and bounds.
    let history: StoreHistory
    /// Its databases (`auditTargets`, `auditSeqs`; a catch-up writes `snapshots` and `meta`
    /// too) and whether the store may be written.
    let databases: AuxiliaryDatabases

    /// The `meta` key of the last seq the audit index covers.
    static let throughKey = Array("auditIndexThrough".utf8)
    /// Records indexed per write transaction when the index catches up.
    static let chunk = 1_000_000

    /// The `meta` key naming the rules the audit index was built under: an index built
    /// before SEMANTICS 1.2 (no key) lists what 1.1's rules changed, so it is not used, and
    /// the next catch-up rebuilds it.
    static let semanticsKey = Array("auditIndexSemantics".utf8)
    static let semantics = Array("1.2".utf8)

    /// What the audit index holds (`herald index`, `herald stats`).
    public struct Statistics: Hashable, Sendable {
        /// The last seq covered; 0 when there is no index.
        public var through: UInt64
        /// Buckets of target windows (`auditTargets` entries, up to 128 targets each).
        public var buckets: Int
        /// Chunks of account seqs (`auditSeqs` entries).
        public var seqChunks: Int
        /// Bytes of the pages both databases occupy.
        public var bytes: Int
    }

    /// The last seq the audit index covers.
    ///
    /// - Returns: The seq; 0 when there is no index (or only one built under earlier rules,
    ///   which is not used).
    /// - Throws: ``StoreError`` with code ``StoreError/Code/unsupportedFormat`` when `meta`
    ///   holds no number there.
    public func through() throws -> UInt64 {
        let (through, current) = try stored()
        return current ? through : 0
    }

    /// The seq `meta` says the audit index covers, and whether it was built under today's rules.
    func stored() throws -> (through: UInt64, current: Bool) {
        let meta = databases.meta
        return try history.environment.storeRead { txn in
            let through = try Store.metaNumber(Self.throughKey, txn, meta: meta, path: history.path)
            let semantics = try txn.get(meta, key: Self.semanticsKey)
            return (through, semantics == Self.semantics)
        }
    }

    /// Whether the store can keep and use an audit index: its whole history is readable
    /// (nothing was discarded or expired) and it runs without what-if group limits.
    var applies: Bool {
        get throws {
            let complete = try history.facts().isComplete
            let projection = history.options.projection
            return projection.groupCountMaxOverride == nil && projection.groupSizeMaxOverride == nil && complete
        }
    }

    /// Brings the audit index up to the last committed record, so that
    /// ``Store/auditReport(account:target:listingUnchanged:)`` of one target and
    /// ``Store/projection(at:account:useSnapshots:)`` read only the events they need.
    ///
    /// It is kept beside the log, not in the append's transaction: catching up replays the
    /// new records from the state after the last indexed one (the newest snapshot at or
    /// before it, then the records after that), with lifecycle changes recorded, and writes
    /// each chunk of up to a million records' targets and seqs sorted, in one transaction
    /// with the new ``through()``. `herald ingest` catches up when it ends (once the store has
    /// an index), as does `herald serve` after each maintenance pass; `herald index` starts
    /// one. A store whose history was discarded or expired keeps no index (its audits start
    /// from a base snapshot). A damaged index is dropped and rebuilt, with a warning.
    ///
    /// - Parameter starting: Whether to build an index the store does not have. Building it
    ///   costs a replay of the history with every update computed (about 8 µs per record),
    ///   and keeping it up as much per record appended, so without `starting` only an index
    ///   that exists is kept up.
    /// - Returns: The last seq indexed; 0 when there is no index.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written, or the error of the
    ///   history read.
    @discardableResult
    public func catchUp(starting: Bool = false) throws -> UInt64 {
        do {
            return try catchUpOnce(starting: starting)
        } catch is Damaged {
            history.options.logger.warning("audit index damaged: rebuilding it from the history", metadata: ["path": "\(history.path)"])
            try drop()
            return try catchUpOnce(starting: true)
        }
    }

    private func catchUpOnce(starting: Bool) throws -> UInt64 {
        try databases.access.require()
        guard try applies else { return 0 }
        var starting = starting
        let stored = try self.stored()
        if stored.through > 0 && !stored.current {
            history.options.logger.notice("audit index built before SEMANTICS 1.2: rebuilding it", metadata: ["path": "\(history.path)"])
            try drop()
            starting = true
        }
        var through = try self.through()
        if through == 0, !starting { return 0 }  // no index, none asked for: ingest's usual case
        let last = try history.bounds().highWaterSeq
        guard through < last else { return through }
        let targets = try databases.open(.auditTargets)
        let seqsDatabase = try databases.open(.auditSeqs)
        let meta = databases.meta
        var projection = try self.projection(at: through)
        var tracker = AuditTargets(startingFrom: projection)
        // Spaced snapshots (Options.snapshotSpacing) are written here when the history has
        // none in a run of seqs (a bulk ingest takes one snapshot at its end): the first
        // record of each run ends a chunk, and the state after it is stored.
        let spacing = history.options.snapshotSpacing
        var snapshotRuns = Set(try history.snapshotSeqs().map { spacing > 0 ? $0 / spacing : 0 })
        let snapshots = try databases.open(.snapshots)
        while through < last {
            var snapshotDue = false
            var entries = AuditIndexEntries()
            var chunkEnd = through
            var count = 0
            try history.forEach(from: through + 1, through: last) { record in
                entries.add(record, outcome: projection.apply(record.event, seq: record.seq), tracker: &tracker)
                chunkEnd = record.seq
                count += 1
                if spacing > 0, record.seq / spacing > 0, !snapshotRuns.contains(record.seq / spacing) {
                    snapshotDue = true
                    return false
                }
                return count < Self.chunk
            }
            if chunkEnd == through { chunkEnd = last }  // nothing left to read (purged tail)
            let end = chunkEnd
            let snapshot = snapshotDue ? SnapshotEnvelope(seq: end, payload: projection.snapshot()).encoded : nil
            if snapshotDue { snapshotRuns.insert(end / spacing) }
            try history.environment.storeWrite { txn in
                if let snapshot { try txn.put(snapshots, key: SeqKey(end).bytes, value: snapshot) }
                try Self.writeWindows(entries.windows, into: targets, txn)
                for (account, accountSeqs) in entries.seqs.sorted(by: { $0.key < $1.key }) {
                    let hash = Self.accountHash(account.name)
                    let previous = try Self.lastIndexedSeq(of: account.name, hash: hash, seqsDatabase, txn)
                    let chunk = SeqChunk(account: Array(account.name.utf8), previousLast: previous, seqs: accountSeqs)
                    try txn.put(seqsDatabase, key: Self.seqsKey(accountHash: hash, first: accountSeqs[0]), value: Self.encode(chunk))
                }
                try txn.put(meta, key: Self.throughKey, value: Array(String(end).utf8))
                try txn.put(meta, key: Self.semanticsKey, value: Self.semantics)
            }
            through = end
        }
        return through
    }

    /// A bucket or seq chunk that a catch-up must extend is damaged: merging into it would
    /// lose the windows it held, so the index is rebuilt instead.
    struct Damaged: Error {}

    /// Merges `windows` into their buckets of `auditTargets` (a window already stored keeps
    /// its `first`; the new `last` is later than any stored). Throws ``Damaged`` when a bucket
    /// to extend fails its checks.
    static func writeWindows(
        _ windows: [AuditIndexKey: (first: UInt64, last: UInt64)], into targets: Database, _ txn: borrowing Transaction
    ) throws {
        let sorted = windows.sorted { $0.key < $1.key }
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count, sorted[end].key.sameBucket(as: sorted[start].key) { end += 1 }
            let key = bucketKey(sorted[start].key)
            var merged: [UInt64: (first: UInt64, last: UInt64)] = [:]
            if let stored = try txn.get(targets, key: key) {
                guard let entries = stored.withUnsafeBytes({ decodeBucket(key: key, value: $0) }) else { throw Damaged() }
                for entry in entries { merged[entry.id] = (entry.first, entry.last) }
            }
            for (slot, window) in sorted[start..<end] {
                merged[slot.id] = (merged[slot.id]?.first ?? window.first, window.last)
            }
            let entries = merged.sorted { $0.key < $1.key }.map { (id: $0.key, first: $0.value.first, last: $0.value.last) }
            try txn.put(targets, key: key, value: encodeBucket(key: key, entries))
            start = end
        }
    }

    /// The audit index's coverage, entries and size.
    ///
    /// - Returns: The statistics; all zero when there is no index.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/lmdb`` when the databases cannot
    ///   be read.
    public func statistics() throws -> Statistics {
        let targets = try databases.existing(.auditTargets)
        let seqs = try databases.existing(.auditSeqs)
        let through = try self.through()
        return try history.environment.storeRead { txn in
            Statistics(
                through: through,
                buckets: try targets.map { try txn.count($0) } ?? 0,
                seqChunks: try seqs.map { try txn.count($0) } ?? 0,
                bytes: (try targets.map { try txn.bytes($0) } ?? 0) + (try seqs.map { try txn.bytes($0) } ?? 0))
        }
    }

    /// Drops the audit index; the next ``catchUp(starting:)`` with `starting` rebuilds it
    /// from the log (`herald index --rebuild`).
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    public func drop() throws {
        try databases.access.require()
        let targets = try databases.existing(.auditTargets)
        let seqs = try databases.existing(.auditSeqs)
        let meta = databases.meta
        try history.environment.storeWrite { txn in try Self.drop(targets: targets, seqs: seqs, meta: meta, txn) }
    }

    /// Empties the index's databases and forgets its coverage, inside the caller's transaction.
    static func drop(targets: Database?, seqs: Database?, meta: Database, _ txn: borrowing Transaction) throws {
        if let targets { try txn.removeAll(targets) }
        if let seqs { try txn.removeAll(seqs) }
        _ = try txn.delete(meta, key: throughKey)
        _ = try txn.delete(meta, key: semanticsKey)
    }

    /// The last seq indexed for `account` in `auditSeqs` (0 when none); throws ``Damaged``
    /// when a chunk under the account's hash fails its checks.
    private static func lastIndexedSeq(of account: String, hash: UInt64, _ database: Database, _ txn: borrowing Transaction) throws -> UInt64 {
        let name = Array(account.utf8)
        var last: UInt64 = 0
        try txn.withCursor(database) { cursor in
            var entry = try cursor.seek(atLeast: seqsKey(accountHash: hash, first: 0))
            while let current = entry, current.key.count == 16, hashPrefix(current.key) == hash {
                // A damaged chunk would break the account's chain for good: rebuild instead.
                guard let chunk = decodeChunk(key: current.key, value: current.value) else { throw Damaged() }
                if chunk.account == name { last = max(last, chunk.seqs[chunk.seqs.count - 1]) }
                entry = try cursor.next()
            }
        }
        return last
    }

    /// The projection after event `seq` with lifecycle changes recorded, for the index.
    private func projection(at seq: UInt64) throws -> Projection {
        let configuration = Projection.Configuration(recordsChanges: true)
        var start: UInt64 = 0
        var projection = Projection(configuration: configuration)
        if seq > 0, let found = try history.newestValidSnapshot(in: 0...seq, configuration: configuration) {
            (start, projection) = found
        }
        try history.forEach(from: start + 1, through: seq) { record in
            projection.replay(record.event, seq: record.seq)
            return true
        }
        projection.settleView()
        return projection
    }
}

extension Store {
    /// The audit index (``AuditIndex``).
    public var auditIndex: AuditIndex { AuditIndex(history: history, databases: auxiliaryDatabases) }
}
