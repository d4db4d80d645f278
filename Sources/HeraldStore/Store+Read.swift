import HeraldEvents
import LMDB

extension Store {
    /// The seq of the last committed event, 0 for an empty log, as seen by a new read
    /// transaction (so a read-only store sees other processes' commits).
    public func committedLastSeq() throws -> UInt64 {
        try environment.storeRead { txn in
            try txn.withCursor(databases.log) { cursor in
                guard let entry = try cursor.last() else { return 0 }
                return SeqKey(bytes: entry.key)?.seq ?? 0
            }
        }
    }

    /// The seq of the first record still in the log (compaction moves the start), or `nil`
    /// when the log is empty.
    public func firstSeq() throws -> UInt64? {
        try environment.storeRead { txn in
            try txn.withCursor(databases.log) { cursor in
                try cursor.first().flatMap { SeqKey(bytes: $0.key)?.seq }
            }
        }
    }

    /// The records with seq in `from...through`, in order. A damaged record throws
    /// ``StoreError/damagedRecord(path:seq:reason:)`` naming its seq.
    public func records(from: UInt64 = 1, through: UInt64 = .max) throws -> [LogRecord] {
        var records: [LogRecord] = []
        try forEachRecord(from: from, through: through) { records.append($0); return true }
        return records
    }

    /// Calls `body` with each record in `from...through`, in order, in one read transaction,
    /// until `body` returns false. An append from `body` cannot grow the map, and throws
    /// ``StoreError/lmdb(_:)`` (map full) when it would have to. `body` must not wait for an
    /// append on another thread either: growing the map waits for every transaction of the
    /// process to end, this one included, so that wait would never end. Collect what you
    /// need with ``records(from:through:)`` and append after it returns instead.
    public func forEachRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (LogRecord) throws -> Bool
    ) throws {
        try forEachRawRecord(from: from, through: through) { seq, bytes in
            let record: LogRecord
            do {
                record = try LogRecord(seq: seq, bytes: bytes)
            } catch let damage as LogRecord.Damage {
                throw StoreError.damagedRecord(path: path, seq: seq, reason: damage.reason)
            }
            return try body(record)
        }
    }

    /// Calls `body` with the seq and stored bytes of each record in `from...through`.
    /// The bytes are valid only during the call. Checks each key (see ``SeqContinuity``): a
    /// key that is not 8 bytes, repeats or goes back, or a gap that neither a purge nor the
    /// compaction base explains, throws ``StoreError/brokenSequence(path:seq:reason:)``
    /// naming the seq, after `body` has had every record before it.
    public func forEachRawRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard from <= through else { return }
        var continuity = SeqContinuity(from: from, floor: try history().base, gaps: try purgedRanges())
        try forEachUncheckedRawRecord(from: from, through: through) { seq, bytes in
            if let problem = continuity.accept(seq) {
                throw StoreError.brokenSequence(path: path, seq: problem.seq, reason: problem.reason)
            }
            return try body(seq, bytes)
        }
    }

    /// ``forEachRawRecord(from:through:_:)`` without the key checks, for `verify`, which
    /// reports every problem instead of stopping at the first.
    func forEachUncheckedRawRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard from <= through else { return }
        try environment.storeRead { txn in
            try txn.withCursor(databases.log) { cursor in
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

    /// The number of records in the log.
    public func recordCount() throws -> Int {
        try environment.storeRead { txn in try txn.count(databases.log) }
    }

    /// Facts about the store's data file: map size, bytes used, page size, commits.
    public func environmentInfo() -> StorageInfo {
        let info = environment.info()
        return StorageInfo(
            mapSize: info.mapSize, lastPage: info.lastPage, pageSize: info.pageSize, lastTransactionId: info.lastTransactionId)
    }

    /// Facts about the store's data file (``Store/environmentInfo()``).
    public struct StorageInfo: Sendable, Hashable {
        /// The size of the file's memory map in bytes; it grows by itself when it fills up.
        public var mapSize: Int
        /// The number of the last page in use.
        public var lastPage: Int
        /// The page size in bytes.
        public var pageSize: Int
        /// The id of the last committed write transaction: counts commits.
        public var lastTransactionId: Int
        /// Bytes in use: (last page + 1) × page size.
        public var usedBytes: Int { (lastPage + 1) * pageSize }
    }

    /// Flushes to disk what a non-durable mode has not flushed yet.
    public func sync() throws {
        try StoreError.mappingLMDB { try environment.sync() }
    }
}
