import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One open LMDB environment (`MDB_env`) and what every ``Environment`` opened on its
/// directory in this process shares: the handle, the lock that keeps map growth away from
/// all their transactions, and the settings that belong to the environment rather than to
/// one opener (flags, map size).
///
/// lmdb.h, Caveats: "Do not have open an LMDB database twice in the same process at the same
/// time. Not even from a plain open() call - close()ing it breaks flock() advisory locking."
/// LMDB's locks on `lock.mdb` are POSIX record locks, which belong to the process: closing a
/// second `MDB_env` on the same files drops the locks the first one holds (another process
/// may then take the database for unused and reinitialise its reader table under a live
/// writer), clears the first one's reader slots, and may tear down the shared mutexes. So
/// ``EnvironmentRegistry`` opens each directory once and counts its openers; this object is
/// closed when the last of them lets go.
final class SharedEnvironment: @unchecked Sendable {
    // @unchecked: the MDB_env is safe to share between threads (opened with MDB_NOTLS; see
    // `Environment`). `openers` is touched only with the registry locked. `settings` has its
    // own lock, and LMDB calls that change the environment's flags or map are made with
    // `resizeLock` held exclusively, so no transaction of this process is live meanwhile.
    // `preallocatedEnd` is only touched inside write transactions, which LMDB runs one at a
    // time across every opener, since they share this one environment.
    let handle: OpaquePointer
    /// The directory's identity: the registry's key.
    let directory: FileIdentity
    /// The identity of `data.mdb` as it was opened. When the file at the path is another one
    /// (compaction renames a compacted copy over it), this environment keeps reading the old
    /// one, like any reader that was open during the swap, and new opens must not join it.
    let dataFile: FileIdentity
    /// Whether LMDB holds the environment `MDB_RDONLY` (its files could not be opened for
    /// writing): a writable opener cannot share it, and LMDB allows no second open.
    let isReadOnly: Bool
    /// Whether it was opened `MDB_NOLOCK` (a read-only open whose lock file cannot be used).
    let isUnlocked: Bool
    /// `mdb_env_set_maxdbs` at open; LMDB cannot change it afterwards.
    let maxDatabases: UInt32
    /// Held shared by every transaction of every opener, exclusively to grow the map or change
    /// the flags. lmdb.h, mdb_env_set_mapsize: "This function may only be called if no
    /// transactions are active in the current process." The current process means all the
    /// openers together, hence one lock for all.
    let resizeLock = ReadWriteLock()
    /// Serializes `mdb_dbi_open` across openers. lmdb.h: "This function must not be called
    /// from multiple concurrent transactions in the same process. A transaction that uses
    /// this function must finish (either commit or abort) before any other transaction in
    /// the process may use this function."
    let databaseOpenLock = Mutex(())
    /// Where the zeros written by the last `Transaction.preallocate(limit:)` end, in bytes.
    var preallocatedEnd = 0
    /// How many ``Environment`` objects use this environment; registry-locked.
    var openers = 0
    /// The settings that writable openers may change.
    let settings: Mutex<Settings>

    /// What the environment's commits do, chosen by its writable openers.
    struct Settings {
        /// The durability the flags now give (`MDB_NOSYNC`, `MDB_NOMETASYNC`).
        var durability: Environment.Durability
        /// Whether a writable opener has set `durability`; until one has, it is the first
        /// read-only opener's, which commits nothing, so the first writer may set it freely.
        var chosenByWriter: Bool
    }

    private init(
        handle: OpaquePointer, directory: FileIdentity, dataFile: FileIdentity, flags: UInt32, options: Environment.Options
    ) {
        self.handle = handle
        self.directory = directory
        self.dataFile = dataFile
        isReadOnly = flags & UInt32(MDB_RDONLY) != 0
        isUnlocked = flags & UInt32(MDB_NOLOCK) != 0
        maxDatabases = options.maxDatabases
        settings = Mutex(Settings(durability: options.durability, chosenByWriter: !options.readOnly))
    }

    /// Opens the environment in directory `path` (identity `directory`) for a first opener,
    /// then clears stale reader slots left by dead processes (`mdb_reader_check`).
    ///
    /// A writable opener gets a writable environment. A read-only opener gets a writable one
    /// too when `data.mdb` exists and the files can be opened for writing, so that a writable
    /// opener later in this process can share it (LMDB cannot reopen it writable while it is
    /// open); its own ``Environment`` still refuses to write. When the files cannot be opened
    /// for writing, it gets `MDB_RDONLY`, and when the lock file cannot be created or written
    /// either (read-only media, another owner's copy), `MDB_RDONLY | MDB_NOLOCK`.
    static func open(path: String, directory: FileIdentity, options: Environment.Options) throws(LMDBError) -> SharedEnvironment {
        var flags = UInt32(MDB_NOTLS) | options.durability.flags
        // Before LMDB maps the file: it trusts every page number it follows, and a page past
        // the end of a cut-short file is SIGBUS. A writable open may initialise an empty file.
        let suspicious = try DataFile.checkHeader(directory: path, allowEmpty: !options.readOnly)
        var handle: OpaquePointer?
        if !options.readOnly {
            handle = try openHandle(path, options: options, flags: flags)
        } else if options.withoutLockFile {
            flags |= UInt32(MDB_RDONLY) | UInt32(MDB_NOLOCK)
            handle = try openHandle(path, options: options, flags: flags)
        } else {
            if !options.forcesReadOnlyEnvironment && dataFileHasContent(path) {
                // Any failure here leaves the read-only open to try as it always could; an
                // empty data file would be initialised by a writable open, hence the check.
                handle = try? openHandle(path, options: options, flags: flags)
            }
            if handle == nil {
                flags |= UInt32(MDB_RDONLY)
                do {
                    handle = try openHandle(path, options: options, flags: flags)
                } catch where error.code == EACCES || error.code == EROFS {
                    flags |= UInt32(MDB_NOLOCK)
                    handle = try openHandle(path, options: options, flags: flags)
                }
            }
        }
        guard let handle else { preconditionFailure("an environment open returned no handle") }
        if suspicious || options.pageCheck == .always {
            do {
                try checkPages(handle, path: path, verdicts: options.walkVerdicts)
            } catch {
                mdb_env_close(handle)
                throw error
            }
        }
        // lmdb.h, mdb_env_get_fd: "Return the filedescriptor for the given environment."
        var descriptor: mdb_filehandle_t = -1
        guard mdb_env_get_fd(handle, &descriptor) == 0, let dataFile = FileIdentity(descriptor: descriptor) else {
            let code = errno
            mdb_env_close(handle)
            throw LMDBError(code: code, operation: "fstat(data.mdb)", path: path)
        }
        return SharedEnvironment(handle: handle, directory: directory, dataFile: dataFile, flags: flags, options: options)
    }

    /// Whether `path/data.mdb` is a regular file with something in it.
    private static func dataFileHasContent(_ path: String) -> Bool {
        var status = stat()
        return stat(path + "/data.mdb", &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_size > 0
    }

    /// Creates, configures and opens one environment handle; discards it when any step fails.
    private static func openHandle(_ path: String, options: Environment.Options, flags: UInt32) throws(LMDBError) -> OpaquePointer {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create", path: path)
        guard let env else { preconditionFailure("mdb_env_create returned no handle") }
        do {
            try check(mdb_env_set_mapsize(env, options.mapSize), "mdb_env_set_mapsize", path: path)
            try check(mdb_env_set_maxdbs(env, options.maxDatabases), "mdb_env_set_maxdbs", path: path)
            try check(mdb_env_set_maxreaders(env, options.maxReaders), "mdb_env_set_maxreaders", path: path)
            try check(mdb_env_open(env, path, flags, 0o600), "mdb_env_open", path: path)
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

    /// Whether a new open of `path` may join this environment: `path/data.mdb` is still the
    /// file it opened.
    func isCurrent(at path: String) -> Bool {
        FileIdentity(path: path + "/data.mdb") == dataFile
    }

    /// Throws ``LMDBError/incompatibleOpen`` when an opener asking for `options` cannot use
    /// this environment as it is open; registry-locked.
    func checkCompatible(with options: Environment.Options, path: String) throws(LMDBError) {
        if !options.readOnly && isReadOnly {
            throw LMDBError(
                code: LMDBError.incompatibleOpen, operation: "open", path: path,
                reason: "the environment is open read-only elsewhere in this process (LMDB opened it MDB_RDONLY, "
                    + "as its files could not be opened for writing then), and LMDB allows one open per process: "
                    + "release the read-only users before opening it for writing")
        }
        if options.maxDatabases > maxDatabases {
            throw LMDBError(
                code: LMDBError.incompatibleOpen, operation: "open", path: path,
                reason: "the environment is open elsewhere in this process with room for \(maxDatabases) named "
                    + "databases, which LMDB fixes when it opens an environment; this open asks for \(options.maxDatabases)")
        }
    }

    /// Brings the environment up to what a writable opener joining it asks for: at least its
    /// durability (the first writer's durability is taken as it is; later writers can only
    /// make it stronger, so no writer's commits are less durable than it asked), and at least
    /// its map size. Changing either needs every transaction of this process to end first.
    func admitWriter(_ options: Environment.Options, path: String) throws(LMDBError) {
        // Without a change to the flags, recording the writer's choice needs no exclusion.
        let flagsFit = settings.withLock { current in
            guard Self.durability(for: options, given: current) == current.durability else { return false }
            current.chosenByWriter = true
            return true
        }
        // The map only grows, so a size read outside the lock can only send us the slow way.
        if flagsFit && options.mapSize <= mapSize { return }
        if resizeLock.isHeldSharedByCurrentThread {
            throw LMDBError(
                code: LMDBError.incompatibleOpen, operation: "open", path: path,
                reason: "a writable open that must change the shared environment's durability or map size cannot "
                    + "run inside a transaction of that environment on the same thread")
        }
        try resizeLock.withExclusive { () throws(LMDBError) in
            try settings.withLock { current throws(LMDBError) in
                let wanted = Self.durability(for: options, given: current)
                if wanted != current.durability {
                    // lmdb.h, mdb_env_set_flags: "If several threads change the flags at the same
                    // time, the result is undefined." None can: this process has no live
                    // transaction, and every change is made here, under the exclusive lock.
                    let both = UInt32(MDB_NOSYNC | MDB_NOMETASYNC)
                    try check(mdb_env_set_flags(handle, both, 0), "mdb_env_set_flags", path: path)
                    if wanted.flags != 0 {
                        try check(mdb_env_set_flags(handle, wanted.flags, 1), "mdb_env_set_flags", path: path)
                    }
                    current.durability = wanted
                }
                current.chosenByWriter = true
                if options.mapSize > unlockedMapSize {
                    try check(mdb_env_set_mapsize(handle, options.mapSize), "mdb_env_set_mapsize", path: path)
                }
            }
        }
    }

    /// The environment's flags as LMDB has them now (`mdb_env_get_flags`), for tests.
    var flags: UInt32 {
        var flags: UInt32 = 0
        mdb_env_get_flags(handle, &flags)
        return flags
    }

    /// The durability the environment must give once a writable opener asking for `options`
    /// joins: its own when no writer has chosen yet, else the stronger of the two.
    private static func durability(for options: Environment.Options, given current: Settings) -> Environment.Durability {
        current.chosenByWriter && current.durability.strength > options.durability.strength
            ? current.durability : options.durability
    }

    /// The current map size in bytes (`mdb_env_info`, which reads the meta pages inside the
    /// map: taken with the resize lock shared unless this thread holds it, so that no other
    /// thread remaps meanwhile).
    var mapSize: Int {
        resizeLock.isHeldSharedByCurrentThread ? unlockedMapSize : resizeLock.withShared { unlockedMapSize }
    }

    /// ``mapSize`` for a caller holding the resize lock exclusively.
    private var unlockedMapSize: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_mapsize
    }

    /// Closes the environment; called by the registry, locked, once no opener is left.
    func close() {
        mdb_env_close(handle)
    }
}

extension Environment.Durability {
    /// The environment flags that give this durability.
    var flags: UInt32 {
        switch self {
        case .full: 0
        case .noMetaSync: UInt32(MDB_NOMETASYNC)
        case .noSync: UInt32(MDB_NOSYNC)
        }
    }

    /// Orders durabilities: a commit under a stronger one survives everything a weaker one's
    /// does, and more.
    var strength: Int {
        switch self {
        case .noSync: 0
        case .noMetaSync: 1
        case .full: 2
        }
    }
}
