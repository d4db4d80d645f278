import LMDB

/// The maintenance of one store directory: compaction, purge, archive retention, salvage,
/// key erasure, backup and verification, run on the directory rather than on an open
/// ``Store``.
///
/// The operations that change the store (`compact`, `purge`, `expireArchive`, `removeKey`)
/// take the writer lock, so they throw a ``StoreError`` with code ``StoreError/Code/locked``
/// while a writer (in this process or another) has the store open: close it first, as
/// `herald serve` does for its maintenance pass. Their dry runs, ``backup(to:)``,
/// ``verify(checkingSnapshots:progress:)`` and ``salvage(to:)`` only read, and run beside
/// writers. A directory without a store throws ``StoreError/Code/notFound``.
///
/// ```swift
/// let maintenance = StoreMaintenance(path: "herald.db")
/// let plan = try maintenance.compact(dryRun: true)
/// print("compaction would archive \(plan.recordsArchived) records")
/// try maintenance.compact()
/// guard try maintenance.verify().isClean else { fatalError("run `herald salvage`") }
/// ```
public struct StoreMaintenance: Sendable {
    /// The store directory.
    public let path: String
    /// The options the store is opened with for each operation (its projection
    /// configuration, logger and fault hooks); each operation sets what it needs on top
    /// (read-only for a dry run, the writer lock and checked pages for a change).
    public let options: Store.Options

    /// Maintenance of the store in the directory `path`; nothing is opened until an
    /// operation runs.
    ///
    /// - Parameters:
    ///   - path: the store directory.
    ///   - options: the options to open the store with.
    public init(path: String, options: Store.Options = Store.Options()) {
        self.path = path
        self.options = options
    }

    /// Removes a stored key and leaves no copy of it in the data file: LMDB does not clear the
    /// pages a delete frees, so, as purge does for records, the store is rewritten by a
    /// compacting copy (live pages only) that is renamed over `data.mdb`. Takes the writer
    /// lock.
    ///
    /// - Parameter id: the key's id, as ``Keyring/all()`` lists it.
    /// - Returns: whether the key existed.
    public func removeKey(id: Int64) throws -> Bool {
        try withExclusiveStore { store in
            try store.keyring.remove(id: id)
        }
    }

    /// Opens the store read-only without replaying its log, for a dry run or a check: it
    /// reads the stored records and snapshots as they are, and runs beside a writer.
    func openReadOnly(_ adjust: (inout Store.Options) -> Void = { _ in }) throws -> Store {
        var options = options
        options.readOnly = true
        options.replayOnOpen = false
        adjust(&options)
        return try Store(path: path, options: options)
    }

    /// Opens the store with the writer lock held, runs `body`, writes compacting copies of
    /// the store's environments, closes it and swaps the copies in.
    func withExclusiveStore<Report>(_ body: (Store) throws -> Report) throws -> Report {
        guard FileSystem.exists(path + "/data.mdb") else { throw StoreError.notFound(path: path) }
        let lock = try WriterLock(directory: path)
        var options = options
        options.readOnly = false
        options.create = false
        options.replayOnOpen = false
        // Copying follows every page: check them first, so a damaged store is an error.
        options.checksPages = true
        // No automatic snapshot: nothing may write in the background while files are swapped.
        options.snapshotInterval = 0
        let report: Report
        var directories = [path]
        do {
            let store = try Store(path: path, options: options, lock: lock)
            report = try body(store)
            try Self.writeCompactCopy(of: store.environment, in: path)
            if let archive = try store.archive() {
                try Self.writeCompactCopy(of: archive.environment, in: archive.path)
                directories.append(archive.path)
            }
        }  // The store releases its environments here, before their files are replaced. They
        // close unless a read-only store of this process shares them; that one keeps the old
        // files, as a reader in another process would, and later opens get the new ones.
        for directory in directories { try Self.swapInCompactCopy(directory) }
        withExtendedLifetime(lock) {}
        return report
    }

    /// Writes `environment`'s compacting copy (`MDB_CP_COMPACT`: live pages only) into
    /// `directory/compact.tmp/data.mdb` and fsyncs it.
    private static func writeCompactCopy(of environment: Environment, in directory: String) throws {
        let temporary = directory + "/" + Store.compactionDirectory
        try FileSystem.remove(temporary)
        try FileSystem.makeDirectory(temporary)
        do {
            try environment.copy(to: temporary, compact: true)
        } catch {
            throw StoreError.lmdb(error)
        }
        try FileSystem.sync(temporary + "/data.mdb")
    }

    /// Renames the compacting copy over `data.mdb` (atomic; the directory is fsynced), then
    /// removes the old `lock.mdb`, which described the old file, and the empty directory.
    private static func swapInCompactCopy(_ directory: String) throws {
        let temporary = directory + "/" + Store.compactionDirectory
        guard FileSystem.exists(temporary + "/data.mdb") else { return }
        // No store of this process opens the directory between the two steps, with the new
        // data file and the old lock file, which a read-only store still open here may use.
        try Environment.withOpensHeld {
            try FileSystem.replace(directory + "/data.mdb", with: temporary + "/data.mdb")
            try FileSystem.remove(directory + "/lock.mdb")
        }
        try FileSystem.remove(temporary)
    }
}
