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

    // `history.facts()` reads them (``StoreHistory/facts()``).

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

    /// Decodes stored record `seq`, naming `location` (the environment's path) in the error.
    static func decodeRecord(seq: UInt64, bytes: UnsafeRawBufferPointer, in location: String) throws -> LogRecord {
        do {
            return try LogRecord(seq: seq, bytes: bytes)
        } catch {
            throw StoreError.damagedRecord(path: location, seq: seq, reason: error.reason)
        }
    }
}

// The store's own callers of the history's internals, under the names they use.
extension Store {
    /// The archive, opened on first use (``StoreHistory/archive(create:)``).
    func archive(create: Bool = false) throws -> Archive? { try history.archive(create: create) }

    /// ``StoreHistory/archiveIsLeftover()``.
    func archiveIsLeftover() throws -> Bool { try history.archiveIsLeftover() }

    /// ``StoreHistory/loadSnapshot(seq:configuration:onlyAccount:)``.
    func loadSnapshot(
        seq: UInt64, configuration: Projection.Configuration? = nil, onlyAccount: String? = nil
    ) throws -> Result<Projection, SnapshotEnvelope.Damage> {
        try history.loadSnapshot(seq: seq, configuration: configuration, onlyAccount: onlyAccount)
    }

    /// ``StoreHistory/newestValidSnapshot(in:configuration:onlyAccount:)``.
    func newestValidSnapshot(
        in range: ClosedRange<UInt64>, configuration: Projection.Configuration? = nil, onlyAccount: String? = nil
    ) throws -> (seq: UInt64, projection: Projection)? {
        try history.newestValidSnapshot(in: range, configuration: configuration, onlyAccount: onlyAccount)
    }

    /// ``StoreHistory/highWaterSeq(below:)``.
    func highWaterSeq(below seq: UInt64) throws -> UInt64 { try history.highWaterSeq(below: seq) }

    /// ``StoreHistory/forEachHistoryBatch(after:through:_:)``.
    func forEachHistoryBatch(after seq: UInt64, through: UInt64 = .max, _ body: (ReplayBatch) throws -> Void) throws {
        try history.forEachHistoryBatch(after: seq, through: through, body)
    }

    /// ``StoreHistory/forEachUncheckedRawLogRecord(from:through:_:)``.
    func forEachUncheckedRawRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try history.forEachUncheckedRawLogRecord(from: from, through: through, body)
    }
}
