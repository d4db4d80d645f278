import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The LMDB environments open in this process, one per directory, keyed by the directory's
/// ``FileIdentity`` so that every spelling of a path (and a symbolic link) finds the same one.
///
/// Every ``Environment`` gets its ``SharedEnvironment`` here and gives it back when it is
/// released; the last one to give it back closes it. Opening and closing both happen with the
/// registry locked, so an open of a directory can never run while an environment of it is
/// being closed: that close would drop the new environment's locks (see
/// ``SharedEnvironment``). Transactions never touch the registry.
enum EnvironmentRegistry {
    /// The open environments by directory. An environment whose data file was replaced while
    /// it was open (compaction) leaves the table, for new opens must get the new file, but
    /// stays open for the openers it has.
    private static let environments = Mutex<[FileIdentity: SharedEnvironment]>([:])

    /// The environment of directory `path` for a new opener asking for `options`: the one
    /// already open in this process when it is still current and the options are compatible
    /// (see ``Environment/init(path:options:)``), else a newly opened one.
    static func acquire(path: String, options: Environment.Options) throws(LMDBError) -> SharedEnvironment {
        guard let directory = FileIdentity(path: path) else {
            throw LMDBError(code: errno, operation: "stat", path: path)
        }
        let shared = try environments.withLock { table throws(LMDBError) -> SharedEnvironment in
            if let open = table[directory], open.isCurrent(at: path) {
                try open.checkCompatible(with: options, path: path)
                open.openers += 1
                return open
            }
            let opened = try SharedEnvironment.open(path: path, directory: directory, options: options)
            opened.openers = 1
            table[directory] = opened
            return opened
        }
        // Outside the registry's lock: this may wait for the transactions of other threads, and
        // one of them may be about to open or release another environment.
        if !options.readOnly {
            do {
                try shared.admitWriter(options, path: path)
            } catch {
                release(shared)
                throw error
            }
        }
        return shared
    }

    /// Gives back an opener's environment; closes it when no opener is left.
    static func release(_ shared: SharedEnvironment) {
        environments.withLock { table in
            shared.openers -= 1
            guard shared.openers == 0 else { return }
            if table[shared.directory] === shared { table[shared.directory] = nil }
            shared.close()
        }
    }

    /// Runs `body` with the registry locked: no environment of this process opens or closes
    /// meanwhile (see ``Environment/withOpensHeld(_:)``).
    static func withOpensHeld(_ body: () throws -> Void) throws {
        try environments.withLock { _ in try body() }
    }

    /// How many openers use the environment open for directory `path`, 0 when none is (for
    /// tests and diagnostics).
    static func openers(of path: String) -> Int {
        guard let directory = FileIdentity(path: path) else { return 0 }
        return environments.withLock { table in table[directory]?.openers ?? 0 }
    }
}
