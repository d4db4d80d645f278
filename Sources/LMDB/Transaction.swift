import CLMDB

/// A live LMDB transaction, valid only inside the ``Environment/read(_:)`` or
/// ``Environment/write(_:)`` closure that received it.
///
/// Bytes it returns point into LMDB's memory map: they are valid until the transaction ends
/// (and, in a write transaction, until the next write). Copy out what must live longer.
public struct Transaction: ~Copyable {
    let handle: OpaquePointer
    /// Unowned: a transaction never outlives the closure its environment runs.
    private let environment: Unmanaged<Environment>
    /// Whether the transaction is read-only.
    public let isReadOnly: Bool

    init(environment: Environment, readOnly: Bool) throws(LMDBError) {
        var txn: OpaquePointer?
        let flags = readOnly ? UInt32(MDB_RDONLY) : 0
        try check(mdb_txn_begin(environment.handle, nil, flags, &txn), "mdb_txn_begin", path: environment.path)
        guard let txn else { preconditionFailure("mdb_txn_begin returned no handle") }
        self.handle = txn
        self.environment = .passUnretained(environment)
        self.isReadOnly = readOnly
    }

    deinit {
        mdb_txn_abort(handle)
    }

    var path: String { environment.takeUnretainedValue().path }

    /// Commits. lmdb.h: the transaction handle is freed whether or not the commit succeeds.
    consuming func commit() throws(LMDBError) {
        let handle = self.handle
        let path = self.path
        discard self
        try check(mdb_txn_commit(handle), "mdb_txn_commit", path: path)
    }

    func openDatabase(_ name: String, create: Bool) throws(LMDBError) -> Database? {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_dbi_open(\(name))", path: path)
        return Database(handle: dbi, name: name)
    }

    /// The value stored under `key`, or `nil` (`MDB_NOTFOUND` is not an error).
    public func get(_ database: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get(\(database.name))", path: path)
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// The value stored under `key`, copied out, or `nil`.
    public func get(_ database: Database, key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { (k) throws -> [UInt8]? in
            try get(database, key: k).map { Array($0) }
        }
    }

    /// How ``put(_:key:value:flags:)`` stores.
    public struct PutFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// `MDB_APPEND`: the key sorts after every key present (fast bulk load); a key out of
        /// order fails with `MDB_KEYEXIST`.
        public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
        /// `MDB_NOOVERWRITE`: fail with `MDB_KEYEXIST` when the key is present.
        public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    }

    /// Stores `value` under `key`.
    public func put(
        _ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(handle, database.handle, &k, &v, flags.rawValue), "mdb_put(\(database.name))", path: path)
    }

    /// Stores `value` under `key`.
    public func put(_ database: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws {
        try key.withUnsafeBytes { (k) throws in
            try value.withUnsafeBytes { (v) throws in
                try put(database, key: k, value: v, flags: flags)
            }
        }
    }

    /// Deletes `key`; returns whether it was present.
    @discardableResult
    public func delete(_ database: Database, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { (k) throws -> Bool in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            let rc = mdb_del(handle, database.handle, &kv, nil)
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "mdb_del(\(database.name))", path: path)
            return true
        }
    }

    /// Removes every entry of `database` (`mdb_drop` with del = 0).
    public func removeAll(_ database: Database) throws(LMDBError) {
        try check(mdb_drop(handle, database.handle, 0), "mdb_drop(\(database.name))", path: path)
    }

    /// The number of entries in `database` (`mdb_stat`).
    public func count(_ database: Database) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat), "mdb_stat(\(database.name))", path: path)
        return stat.ms_entries
    }

    /// Runs `body` with a cursor over `database`; the cursor is closed when `body` returns.
    public func withCursor<R>(_ database: Database, _ body: (inout Cursor) throws -> R) throws -> R {
        var cursor = try Cursor(transaction: handle, database: database, path: path)
        return try body(&cursor)
    }
}
