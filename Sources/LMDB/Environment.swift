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
///
/// Each `Environment` is one opener's handle. LMDB allows a database to be open only once per
/// process (closing a second `MDB_env` on the same files drops the locks the first holds), so
/// every `Environment` opened on the same directory in this process, however its path is
/// spelled, shares one `MDB_env`, which is closed when the last of them is released. See
/// ``init(path:options:)`` for which opens can share.
package final class Environment: @unchecked Sendable {
    // @unchecked: an MDB_env is safe to share between threads. Opened with MDB_NOTLS, read
    // transactions are not tied to threads; write transactions are serialized by LMDB itself
    // (across every opener of the shared environment) and never leave the closure that made
    // them. `resizeLock`, the shared environment's, keeps map growth away from every live
    // transaction of this process, whichever opener runs it.
    let handle: OpaquePointer
    /// The environment this opener shares with the others of its directory in this process.
    let shared: SharedEnvironment
    /// The directory of the environment, as this opener spelled it.
    package let path: String
    /// The options this opener asked for. The shared environment's map size and durability
    /// may differ (see ``init(path:options:)``).
    package let options: Options
    /// The shared environment's lock, held here too so that transactions reach it directly.
    let resizeLock: ReadWriteLock
    /// Whether ``release()`` gave this opener's share back; read and written under `resizeLock`
    /// (shared to read, exclusive to set), so no transaction of this opener outlives it.
    private(set) var isReleased = false
    /// Where the zeros written by the last `Transaction.preallocate(limit:)` end, in bytes;
    /// kept by the shared environment, whose write transactions run one at a time.
    var preallocatedEnd: Int {
        get { shared.preallocatedEnd }
        set { shared.preallocatedEnd = newValue }
    }

    /// How a commit reaches the disk.
    ///
    /// A setting of the whole environment (its `MDB_NOSYNC` and `MDB_NOMETASYNC` flags), so
    /// writable openers that share one get the strongest any of them asked for (see
    /// ``init(path:options:)``).
    package enum Durability: Sendable, Hashable {
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
    package struct Options: Sendable, Hashable {
        /// The initial map size in bytes; it grows automatically on `MDB_MAP_FULL`. A writable
        /// open of an environment already open in this process grows the map to it when it is
        /// smaller; a read-only one takes the map as it is.
        package var mapSize: Int = 256 << 20
        /// The number of named databases (`mdb_env_set_maxdbs`). LMDB fixes it when it opens
        /// the environment, so an open asking for more than the one already open in this
        /// process was opened with fails (``LMDBError/incompatibleOpen``).
        package var maxDatabases: UInt32 = 16
        /// The number of reader slots (`mdb_env_set_maxreaders`). Only the open that creates
        /// the lock file sets it: LMDB takes the reader table of a lock file in use as it is,
        /// whatever a later open asks, and so does an open that shares an open environment.
        package var maxReaders: UInt32 = 126
        /// No writes through this opener: ``write(_:)`` traps and databases are not created.
        /// LMDB itself opens the environment `MDB_RDONLY` only when its files cannot be
        /// opened for writing (see ``init(path:options:)``).
        package var readOnly = false
        /// With ``readOnly``: open `MDB_RDONLY | MDB_NOLOCK` at once, so that the open changes
        /// no file of the directory (the lock file is neither created nor written). Reading
        /// then takes no part in LMDB's reader table: the caller must make sure no process
        /// writes the environment meanwhile (`herald console` holds the store's writer lock
        /// shared for that).
        package var withoutLockFile = false
        /// See ``Durability``. Read-only openers commit nothing, so theirs only counts until a
        /// writable opener joins.
        package var durability: Durability = .full
        /// Tests only: a read-only first open uses `MDB_RDONLY` even when the files could be
        /// opened for writing, as it must when they cannot (which root, running the tests,
        /// never meets).
        var forcesReadOnlyEnvironment = false
        /// How much of an existing `data.mdb` the first open of the environment in this
        /// process checks before LMDB maps it (see ``PageCheck``). A damaged file throws an
        /// error with code `MDB_CORRUPTED` and ``LMDBError/damage`` set.
        package var pageCheck: PageCheck = .whenSuspicious
        /// A directory where a clean walk of ``PageCheck/always`` is remembered, so that a
        /// later open of the same, unchanged `data.mdb` at the same commit skips it (the file's
        /// device, inode, size, modification and status-change times and the commit's txnid
        /// must all be equal; any write changes the status-change time). `nil`: every open
        /// walks. Meant for reading commands run again and again on a copied store; a check of
        /// the file itself (`verify`) should walk.
        package var walkVerdicts: String?
        /// Creates the default options.
        package init() {}
    }

    /// Opens (creating if needed) the environment in directory `path`, or joins the one this
    /// process already has open there, then clears stale reader slots left by dead processes
    /// (`mdb_reader_check`, at the first open).
    ///
    /// An environment is open at most once per process: an open of a directory (found by its
    /// device and inode, so `dir`, `dir/.` and a symbolic link to `dir` are one) that this
    /// process already has open shares that environment, and the last opener to be released
    /// closes it. Opens are compatible, and share, as follows:
    /// - Read-only opens share any environment. A read-only first open has LMDB open the
    ///   environment for writing all the same when `data.mdb` exists and its files can be
    ///   opened for writing, so that a writable open later in this process can share it; this
    ///   opener still cannot write (``Options/readOnly``).
    /// - A writable open shares any environment LMDB did not open `MDB_RDONLY`. One that LMDB
    ///   holds `MDB_RDONLY` (a read-only first open whose files could not be opened for
    ///   writing) cannot be shared for writing, nor opened a second time, so the open throws
    ///   ``LMDBError/incompatibleOpen``, naming the path: release the read-only openers first.
    /// - Durability belongs to the environment: the first writable opener's is taken, and a
    ///   later writable opener can only make it stronger, never weaker, so that no writer's
    ///   commits are less durable than it asked; it stays so until the environment closes.
    ///   A writable opener asking for a larger ``Options/mapSize`` grows the map to it. Making
    ///   either change waits for every transaction of this process on the environment to end,
    ///   so it throws ``LMDBError/incompatibleOpen`` when the calling thread is inside one.
    /// - ``Options/maxDatabases`` above the open environment's throws
    ///   ``LMDBError/incompatibleOpen``; ``Options/maxReaders`` of a later open is ignored.
    ///
    /// A read-only first open of a directory whose lock file cannot be created or written (a
    /// store on read-only media, or a copy the caller may not write) opens without the lock
    /// file (`MDB_NOLOCK`): reading then takes no part in LMDB's reader table, so no process
    /// may write to that environment meanwhile, which read-only media and missing permissions
    /// already make unlikely. Later read-only opens share it; writable ones fail as above.
    ///
    /// When `data.mdb` was replaced since the environment was opened (compaction renames a
    /// compacted copy over it), the open environment keeps the old file for its openers, as a
    /// reader in another process would, and a new open opens the new file afresh.
    package init(path: String, options: Options = Options()) throws(LMDBError) {
        let shared = try EnvironmentRegistry.acquire(path: path, options: options)
        self.shared = shared
        self.handle = shared.handle
        self.resizeLock = shared.resizeLock
        self.path = path
        self.options = options
    }

    deinit {
        if !isReleased { EnvironmentRegistry.release(shared) }
    }

    /// Gives this opener's share of the environment back now rather than at its release (the
    /// last opener's close closes the `MDB_env`), once every transaction of this process on the
    /// environment has ended. Later transactions and calls of this opener throw
    /// ``LMDBError/closed``. Idempotent. Returns false, closing nothing, when the calling
    /// thread is inside a transaction of the environment (it would wait for itself); the
    /// release then comes with the opener's.
    @discardableResult
    package func release() -> Bool {
        guard !resizeLock.isHeldSharedByCurrentThread else { return false }
        let first = resizeLock.withExclusive { () -> Bool in
            defer { isReleased = true }
            return !isReleased
        }
        if first { EnvironmentRegistry.release(shared) }
        return true
    }

    /// Throws ``LMDBError/closed`` once ``release()`` ran; called with `resizeLock` held.
    func requireOpen(_ operation: String) throws(LMDBError) {
        guard isReleased else { return }
        throw LMDBError(code: LMDBError.closed, operation: operation, path: path, reason: "the environment was released")
    }

    /// Runs `body` in a read-only transaction, which sees the last commit at its start.
    package func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
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
    package func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
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
    package var mapSize: Int { info().mapSize }

    /// Whether the calling thread is inside a transaction of this environment (in a read's
    /// closure, say): the map cannot grow until that transaction ends.
    package var isInsideTransactionOnThisThread: Bool { resizeLock.isHeldSharedByCurrentThread }

    /// Facts about the environment (`mdb_env_info`, `mdb_env_stat`).
    package struct Info: Sendable, Hashable {
        package var mapSize: Int
        package var lastPage: Int
        package var pageSize: Int
        /// The id of the last committed write transaction (`me_last_txnid`): counts commits.
        package var lastTransactionId: Int
        /// Bytes in use: (last page + 1) × page size.
        package var usedBytes: Int { (lastPage + 1) * pageSize }
    }

    /// Reads `mdb_env_info` and `mdb_env_stat`.
    ///
    /// Both read the meta pages, which lie inside the map: while another thread grows the map
    /// (`mdb_env_set_mapsize` unmaps and maps it again) they would read unmapped memory, so
    /// this takes the resize lock shared, as a transaction does (a thread inside one already
    /// holds it).
    package func info() -> Info {
        if resizeLock.isHeldSharedByCurrentThread { return unlockedInfo() }
        return resizeLock.withShared { unlockedInfo() }
    }

    /// Drops this process's mappings of `data.mdb`'s pages (`madvise(MADV_DONTNEED)` on the
    /// map): the pages stay in the page cache and a later read maps them again, but the
    /// process's resident memory no longer counts them. A reader of scattered records of a
    /// large file calls this now and then, so that the kernel's fault-around (each fault maps
    /// up to 64 KiB around the page read) does not pile up hundreds of megabytes. Pointers
    /// into the map stay valid (LMDB maps the file shared and read-only). LMDB does not expose
    /// the map's address (`me_mapaddr` is only set with `MDB_FIXEDMAP`), so the mapping is
    /// found in `/proc/self/maps` by the data file's inode; where there is no such file, this
    /// does nothing.
    package func releaseMappedPages() {
        guard let identity = FileIdentity(path: path + "/data.mdb") else { return }
        resizeLock.withShared {
            guard !isReleased, let maps = fopen("/proc/self/maps", "r") else { return }
            defer { fclose(maps) }
            var line = [CChar](repeating: 0, count: 4096)
            while fgets(&line, Int32(line.count), maps) != nil {
                let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
                // Only a shared, read-only mapping, as LMDB's is: dropping the pages of a
                // private mapping (a library's relocated data, say) would discard its changes.
                guard fields.count >= 6, let inode = UInt64(fields[4]), inode == identity.inode,
                    fields[1] == "r--s"
                else { continue }
                let range = fields[0].split(separator: "-")
                guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                    let address = UnsafeMutableRawPointer(bitPattern: start)
                else { continue }
                _ = madvise(address, Int(end - start), MADV_DONTNEED)
            }
        }
    }

    /// ``info()`` for a caller that excludes map growth itself (holding the resize lock).
    private func unlockedInfo() -> Info {
        guard !isReleased else { return Info(mapSize: 0, lastPage: 0, pageSize: 0, lastTransactionId: 0) }
        var envInfo = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(handle, &envInfo)
        mdb_env_stat(handle, &stat)
        return Info(
            mapSize: envInfo.me_mapsize, lastPage: envInfo.me_last_pgno, pageSize: Int(stat.ms_psize),
            lastTransactionId: envInfo.me_last_txnid)
    }

    /// Flushes buffers to disk (`mdb_env_sync` with force), for the non-durable modes. A
    /// read-only opener has nothing to flush and gets `EACCES`, as LMDB answers for an
    /// `MDB_RDONLY` environment, even when it shares a writable one.
    package func sync() throws(LMDBError) {
        guard !options.readOnly else { throw LMDBError(code: EACCES, operation: "mdb_env_sync", path: path) }
        // Shared: the flags it reads are changed only under the exclusive lock.
        try resizeLock.withShared { () throws(LMDBError) in
            try requireOpen("mdb_env_sync")
            try check(mdb_env_sync(handle, 1), "mdb_env_sync", path: path)
        }
    }

    /// Runs `body` while no environment of this process opens or closes, for replacing an
    /// environment's files in several steps (a data file, then its lock file) that an open
    /// in between would find half done: it would open the new data file with the lock file
    /// of an environment still open, so two environments of this process would share one lock
    /// file, which LMDB forbids. Keep `body` short: every open and close in the process waits.
    package static func withOpensHeld(_ body: () throws -> Void) throws {
        try EnvironmentRegistry.withOpensHeld(body)
    }

    /// Writes a copy of the environment into the empty directory `destination`.
    ///
    /// With `compact`, free pages are omitted and pages renumbered (`MDB_CP_COMPACT`): the
    /// copy is as small as the live data. Runs inside a read transaction, so writers go on.
    package func copy(to destination: String, compact: Bool) throws(LMDBError) {
        let flags = compact ? UInt32(MDB_CP_COMPACT) : 0
        try resizeLock.withShared { () throws(LMDBError) in
            try requireOpen("mdb_env_copy2")
            try check(mdb_env_copy2(handle, destination, flags), "mdb_env_copy2", path: path)
        }
    }

    /// Opens a named database, creating it when `create` is true (needs a writable
    /// environment). Returns `nil` when it does not exist and `create` is false.
    ///
    /// Opens of every opener of the shared environment run one at a time, each in its own
    /// transaction (lmdb.h: a transaction that opens a database "must finish (either commit or
    /// abort) before any other transaction in the process may use this function"), so call
    /// it outside any transaction of this environment.
    package func openDatabase(_ name: String, create: Bool = false) throws -> Database? {
        let open = { (txn: borrowing Transaction) throws -> Database? in
            try txn.openDatabase(name, create: create)
        }
        return try shared.databaseOpenLock.withLock { _ throws -> Database? in
            options.readOnly || !create ? try readCommitting(open) : try write(open)
        }
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

    /// Grows the map of the shared environment, with every transaction of every opener
    /// excluded.
    private func grow() throws(LMDBError) {
        try requireNoTransactionOnThisThread(LMDBError.mapFull)
        try resizeLock.withExclusive { () throws(LMDBError) in
            try requireOpen("mdb_env_set_mapsize")
            let current = unlockedInfo().mapSize
            let step = min(current, 1 << 30)
            try check(mdb_env_set_mapsize(handle, current + step), "mdb_env_set_mapsize", path: path)
        }
    }

    /// Adopts the map size another process grew the map to, with every transaction of every
    /// opener excluded.
    private func adoptMapSize() throws(LMDBError) {
        try requireNoTransactionOnThisThread(LMDBError.mapResized)
        // lmdb.h: "This function may be called with a size of zero to adopt the new size."
        try resizeLock.withExclusive { () throws(LMDBError) in
            try requireOpen("mdb_env_set_mapsize")
            try check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize", path: path)
        }
    }
}
