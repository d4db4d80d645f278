import LMDB

/// The archive of a store: log records that compaction moved out of the log, kept in a
/// separate LMDB environment in `DIR/archive/` with the same keys (seq, 8 bytes big-endian)
/// and the same record encoding, so a full-history replay reads the archive, then the log.
///
/// The archive has a `log` database and a `meta` database whose `format` is
/// `herald-archive 1`. It is written only by compaction (which commits it before the log
/// deletes what it moved) and by purge. Stores of one process that open the same archive
/// share its LMDB environment, as they share the store's (see `LMDB.Environment`).
final class Archive: Sendable {
    /// The archive directory, `DIR/archive`.
    let path: String
    let environment: Environment
    let log: Database
    let meta: Database

    /// The directory name of the archive inside a store.
    static let directoryName = "archive"
    /// The value of the archive's `format` meta key.
    static let formatTag = "herald-archive 1"

    /// Opens the archive of store `storePath`; creates it when `create` (and writable).
    /// Returns `nil` when there is none and none is to be created.
    static func open(
        storePath: String, create: Bool, readOnly: Bool, durability: Store.Durability, checksPages: Bool = false,
        walkVerdicts: String? = nil, withoutLockFile: Bool = false
    ) throws -> Archive? {
        let path = storePath + "/" + directoryName
        if !FileSystem.exists(path + "/data.mdb") {
            guard create, !readOnly else { return nil }
            try FileSystem.makeDirectory(path)
        }
        return try Archive(
            path: path, readOnly: readOnly, durability: durability, checksPages: checksPages, walkVerdicts: walkVerdicts,
            withoutLockFile: withoutLockFile)
    }

    private init(
        path: String, readOnly: Bool, durability: Store.Durability, checksPages: Bool, walkVerdicts: String?, withoutLockFile: Bool
    ) throws {
        self.path = path
        var options = Environment.Options()
        options.pageCheck = readOnly || checksPages ? .always : .whenSuspicious
        options.walkVerdicts = walkVerdicts
        options.readOnly = readOnly
        options.withoutLockFile = readOnly && withoutLockFile
        options.durability = durability.environmentDurability
        options.mapSize = 64 << 20
        options.maxDatabases = 4
        func open(_ name: String, in environment: Environment) throws -> Database {
            guard let database = try environment.openDatabase(name, create: !readOnly) else {
                throw StoreError.unsupportedFormat(path: path, found: "no `\(name)` database in the archive")
            }
            return database
        }
        do {
            let environment = try Environment(path: path, options: options)
            self.environment = environment
            log = try open("log", in: environment)
            meta = try open("meta", in: environment)
        } catch let error as LMDBError {
            throw StoreError.lmdb(error)
        }
        let key = Array("format".utf8)
        let found = try environment.storeRead { txn in try txn.get(meta, key: key) }
        if let found {
            let tag = String(decoding: found, as: UTF8.self)
            guard tag == Self.formatTag else { throw StoreError.unsupportedFormat(path: path, found: tag) }
        } else if !readOnly {
            try environment.storeWrite { txn in try txn.put(meta, key: key, value: Array(Self.formatTag.utf8)) }
        }
    }

    /// Stores encoded records under their seqs, overwriting equal keys (a compaction that
    /// crashed after archiving may archive the same records again). One commit.
    func store(_ records: [(seq: UInt64, bytes: [UInt8])]) throws {
        try environment.storeWrite { txn in
            for record in records {
                try txn.put(log, key: SeqKey(record.seq).bytes, value: record.bytes)
            }
        }
    }

    /// Deletes the records with these seqs, in one commit; returns how many existed.
    @discardableResult
    func delete(_ seqs: some Collection<UInt64>) throws -> Int {
        guard !seqs.isEmpty else { return 0 }
        return try environment.storeWrite { txn in
            var deleted = 0
            for seq in seqs where try txn.delete(log, key: SeqKey(seq).bytes) { deleted += 1 }
            return deleted
        }
    }

    /// Calls `body` with the seq and stored bytes of each archived record in `from...through`,
    /// in order, until it returns false. The bytes are valid only during the call.
    func forEachRawRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard from <= through else { return }
        try environment.storeRead { txn in
            try txn.withCursor(log) { cursor in
                var entry = try cursor.seek(atLeast: SeqKey(from).bytes)
                while let current = entry {
                    guard let key = SeqKey(bytes: current.key) else {
                        throw StoreError.damagedRecord(path: path, seq: 0, reason: "archive key of \(current.key.count) bytes")
                    }
                    guard key.seq <= through, try body(key.seq, current.value) else { return }
                    entry = try cursor.next()
                }
            }
        }
    }

    /// The number of archived records.
    func recordCount() throws -> Int {
        try environment.storeRead { txn in try txn.count(log) }
    }

    /// The number of archived records with seq ≤ `through`.
    func recordCount(through: UInt64) throws -> Int {
        var count = 0
        try forEachRawRecord(through: through) { _, _ in
            count += 1
            return true
        }
        return count
    }
}
