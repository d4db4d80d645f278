import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open LMDB environment: one directory holding `data.mdb` and `lock.mdb`.
///
/// Transactions are scoped to closures: ``read(_:)`` and ``write(_:)``. A write commits when
/// its closure returns and aborts when it throws; when the map is full, the environment grows
/// the map and runs the closure again, so a write closure must do the same thing each time.
public final class Environment: @unchecked Sendable {
    // @unchecked: an MDB_env is safe to share between threads. Opened with MDB_NOTLS, read
    // transactions are not tied to threads; write transactions are serialized by LMDB itself
    // and never leave the closure that made them. `resizeLock` keeps map growth away from
    // every live transaction of this process. `preallocatedEnd` is only touched inside write
    // transactions, which LMDB runs one at a time.
    let handle: OpaquePointer
    /// The directory of the environment.
    public let path: String
    /// The options it was opened with.
    public let options: Options
    let resizeLock = ReadWriteLock()
    /// Where the zeros written by the last `Transaction.preallocate(limit:)` end, in bytes.
    var preallocatedEnd = 0

    /// How a commit reaches the disk.
    public enum Durability: Sendable, Hashable {
        /// fsync at every commit: a crash of the process or of the machine loses nothing
        /// that was committed. The default.
        case full
        /// `MDB_NOMETASYNC`: the meta page is flushed one commit late. A machine crash can
        /// undo the last commit; a process crash loses nothing.
        case noMetaSync
        /// `MDB_NOSYNC`: no fsync; the OS writes when it likes. A machine crash can lose
        /// every commit since the last sync (or corrupt nothing but lose recent data, as LMDB
        /// keeps its B-tree consistent); a process crash loses nothing.
        case noSync
    }

    /// How to open an environment.
    public struct Options: Sendable, Hashable {
        /// The initial map size in bytes; it grows automatically on `MDB_MAP_FULL`.
        public var mapSize: Int = 256 << 20
        /// The number of named databases (`mdb_env_set_maxdbs`).
        public var maxDatabases: UInt32 = 16
        /// The number of reader slots (`mdb_env_set_maxreaders`).
        public var maxReaders: UInt32 = 126
        /// `MDB_RDONLY`: no writes through this handle.
        public var readOnly = false
        /// See ``Durability``.
        public var durability: Durability = .full
        /// Creates the default options.
        public init() {}
    }

    /// Opens (creating if needed) the environment in directory `path`, then clears stale
    /// reader slots left by dead processes (`mdb_reader_check`).
    ///
    /// A read-only open of a directory whose lock file cannot be created or written (a store
    /// on read-only media, or a copy the caller may not write) opens without the lock file
    /// (`MDB_NOLOCK`): reading then takes no part in LMDB's reader table, so no process may
    /// write to that environment meanwhile, which read-only media and missing permissions
    /// already make unlikely.
    public init(path: String, options: Options = Options()) throws(LMDBError) {
        var flags = UInt32(MDB_NOTLS)
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        switch options.durability {
        case .full: break
        case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
        case .noSync: flags |= UInt32(MDB_NOSYNC)
        }
        let handle: OpaquePointer
        do {
            handle = try Self.open(path, options: options, flags: flags)
        } catch where options.readOnly && (error.code == EACCES || error.code == EROFS) {
            handle = try Self.open(path, options: options, flags: flags | UInt32(MDB_NOLOCK))
        }
        self.handle = handle
        self.path = path
        self.options = options
    }

    /// Creates, configures and opens one environment handle; discards it when any step fails.
    private static func open(_ path: String, options: Options, flags: UInt32) throws(LMDBError) -> OpaquePointer {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create", path: path)
        guard let env else { preconditionFailure("mdb_env_create returned no handle") }
        do {
            try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize", path: path)
            try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs", path: path)
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders", path: path)
            try check(mdb_env_open(env, path, flags, 0o644), "mdb_env_open", path: path)
            var dead: Int32 = 0
            try check(mdb_reader_check(env, &dead), "mdb_reader_check", path: path)
        } catch {
            // lmdb.h, mdb_env_open: "If this function fails, mdb_env_close() must be called
            // to discard the MDB_env handle."
            mdb_env_close(env)
            throw error
        }
        return env
    }

    deinit {
        mdb_env_close(handle)
    }

    /// Runs `body` in a read-only transaction, which sees the last commit at its start.
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        while true {
            do {
                return try resizeLock.withShared { () throws -> R in
                    let txn = try Transaction(environment: self, readOnly: true)
                    return try body(txn)
                }
            } catch let error as LMDBError where error.code == LMDBError.mapResized {
                try adoptMapSize()
            }
        }
    }

    /// Runs `body` in a write transaction and commits it when `body` returns.
    ///
    /// Durable on return under the default ``Durability/full``. If the map fills up, the
    /// transaction is aborted, the map is doubled and `body` runs again; but when the calling
    /// thread is inside another transaction of this environment (a write from a read's
    /// closure), the map cannot grow and `MDB_MAP_FULL` is thrown.
    public func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        precondition(!options.readOnly, "write on a read-only environment: \(path)")
        while true {
            do {
                return try resizeLock.withShared { () throws -> R in
                    let txn = try Transaction(environment: self, readOnly: false)
                    let result = try body(txn)
                    try txn.commit()
                    return result
                }
            } catch let error as LMDBError where error.code == LMDBError.mapFull {
                try grow()
            } catch let error as LMDBError where error.code == LMDBError.mapResized {
                try adoptMapSize()
            }
        }
    }

    /// The current map size in bytes.
    public var mapSize: Int { info().mapSize }

    /// Facts about the environment (`mdb_env_info`, `mdb_env_stat`).
    public struct Info: Sendable, Hashable {
        public var mapSize: Int
        public var lastPage: Int
        public var pageSize: Int
        /// The id of the last committed write transaction (`me_last_txnid`): counts commits.
        public var lastTransactionId: Int
        /// Bytes in use: (last page + 1) × page size.
        public var usedBytes: Int { (lastPage + 1) * pageSize }
    }

    /// Reads `mdb_env_info` and `mdb_env_stat`.
    public func info() -> Info {
        var envInfo = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(handle, &envInfo)
        mdb_env_stat(handle, &stat)
        return Info(
            mapSize: envInfo.me_mapsize, lastPage: envInfo.me_last_pgno, pageSize: Int(stat.ms_psize),
            lastTransactionId: envInfo.me_last_txnid)
    }

    /// Flushes buffers to disk (`mdb_env_sync` with force), for the non-durable modes.
    public func sync() throws(LMDBError) {
        try check(mdb_env_sync(handle, 1), "mdb_env_sync", path: path)
    }

    /// Writes a copy of the environment into the empty directory `destination`.
    ///
    /// With `compact`, free pages are omitted and pages renumbered (`MDB_CP_COMPACT`): the
    /// copy is as small as the live data. Runs inside a read transaction, so writers go on.
    public func copy(to destination: String, compact: Bool) throws(LMDBError) {
        let flags = compact ? UInt32(MDB_CP_COMPACT) : 0
        try resizeLock.withShared { () throws(LMDBError) in
            try check(mdb_env_copy2(handle, destination, flags), "mdb_env_copy2", path: path)
        }
    }

    /// Opens a named database, creating it when `create` is true (needs a writable
    /// environment). Returns `nil` when it does not exist and `create` is false.
    public func openDatabase(_ name: String, create: Bool = false) throws -> Database? {
        let open = { (txn: borrowing Transaction) throws -> Database? in
            try txn.openDatabase(name, create: create)
        }
        return options.readOnly || !create ? try readCommitting(open) : try write(open)
    }

    /// A read-only transaction that is committed, not aborted, so that database handles it
    /// opened outlive it (lmdb.h, mdb_dbi_open).
    private func readCommitting<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try resizeLock.withShared { () throws -> R in
            let txn = try Transaction(environment: self, readOnly: true)
            let result = try body(txn)
            try txn.commit()
            return result
        }
    }

    /// Throws `code` (the error that calls for a map resize) when the calling thread is
    /// inside a transaction of this environment, such as a write started in a read's
    /// closure: the resize waits for every transaction to end, its own too, so it would
    /// wait forever.
    private func requireNoTransactionOnThisThread(_ code: Int32) throws(LMDBError) {
        guard resizeLock.isHeldSharedByCurrentThread else { return }
        throw LMDBError(
            code: code, operation: "mdb_env_set_mapsize (the map must be resized, but this thread is inside a transaction)",
            path: path)
    }

    private func grow() throws(LMDBError) {
        try requireNoTransactionOnThisThread(LMDBError.mapFull)
        try resizeLock.withExclusive { () throws(LMDBError) in
            let current = info().mapSize
            let step = min(current, 1 << 30)
            try check(mdb_env_set_mapsize(handle, current + step), "mdb_env_set_mapsize", path: path)
        }
    }

    private func adoptMapSize() throws(LMDBError) {
        try requireNoTransactionOnThisThread(LMDBError.mapResized)
        // lmdb.h: "This function may be called with a size of zero to adopt the new size."
        try resizeLock.withExclusive { () throws(LMDBError) in
            try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize", path: path)
        }
    }
}
