import LMDB
import Synchronization

extension Store {
    /// Named databases besides `log` and `meta`, created the first time they are written.
    enum AuxiliaryDatabase: String, CaseIterable {
        case snapshots, quarantine, keys, gaps
        /// Retired: payload digest (16 bytes) → seq of the first record stored from it. No
        /// longer written or read; a purge empties one an older store has.
        case digests
        /// First seq → an ``ExportedRange`` (JSON): what archive retention exported and removed.
        case exports
        /// Audit index (``AuditIndex``): target → the first and last seq that changed it.
        case auditTargets
        /// Audit index: each account's seqs, in chunks.
        case auditSeqs
    }

    /// Opens (creating) an auxiliary database; needs a writable store.
    func auxiliary(_ which: AuxiliaryDatabase) throws -> Database {
        try requireWritable()
        return try openAuxiliary(which, create: true)!
    }

    /// Opens an auxiliary database if it exists.
    func existingAuxiliary(_ which: AuxiliaryDatabase) throws -> Database? {
        try openAuxiliary(which, create: false)
    }

    private func openAuxiliary(_ which: AuxiliaryDatabase, create: Bool) throws -> Database? {
        try auxiliaryHandles.open(which, create: create, in: environment)
    }

    /// What ``Keyring`` and ``Quarantine`` need of the store to open its
    /// auxiliary databases, instead of the store itself.
    var auxiliaryDatabases: AuxiliaryDatabases {
        AuxiliaryDatabases(
            environment: environment, handles: auxiliaryHandles, meta: databases.meta,
            access: WriteAccess(path: path, readOnly: options.readOnly) { [self] in isClosed })
    }

    /// Auxiliary database handles opened so far, shared by the store and its
    /// ``SnapshotWriter``. lmdb.h: "This function must not be called from multiple concurrent
    /// transactions in the same process", so opens go through here (and, across the stores of
    /// this process that share the environment, through `Environment.openDatabase`'s lock).
    final class AuxiliaryHandles: Sendable {
        private let handles = Mutex<[String: Database]>([:])

        /// The handle of `which`, opened (and with `create`, created) on first use; `nil` when
        /// it does not exist and `create` is false.
        func open(_ which: AuxiliaryDatabase, create: Bool, in environment: Environment) throws -> Database? {
            try handles.withLock { handles in
                if let database = handles[which.rawValue] { return database }
                let database = try StoreError.mappingLMDB { try environment.openDatabase(which.rawValue, create: create) }
                handles[which.rawValue] = database
                return database
            }
        }
    }
}

/// Refuses writes to a read-only or closed store, as `Store.requireWritable()` does, for a
/// subsystem that does not hold the store.
struct WriteAccess: Sendable {
    /// The store directory, named in the errors.
    let path: String
    let readOnly: Bool
    /// Whether the store was closed. A closure over the store, which it keeps alive: whether
    /// it is closed is the store's own atomic flag (its write path reads it too), and a write
    /// through a subsystem must keep the store, and so its writer lock, open while it runs,
    /// even when the store itself was a temporary (`try Store(path: p).keyring.add(key)`).
    let isClosed: @Sendable () -> Bool

    /// Throws ``StoreError/Code/readOnly`` or ``StoreError/Code/closed``.
    func require() throws {
        guard !readOnly else { throw StoreError.readOnly(path: path) }
        if isClosed() { throw StoreError.closed(path: path) }
    }
}

/// A store's environment and auxiliary databases, as its subsystems open them: what
/// ``Keyring`` and ``Quarantine`` hold instead of the store.
struct AuxiliaryDatabases: Sendable {
    let environment: Environment
    let handles: Store.AuxiliaryHandles
    /// The store's `meta` database (store-wide facts, such as the last quarantine id given).
    let meta: Database
    let access: WriteAccess

    /// The store directory.
    var path: String { access.path }

    /// Opens (creating) `which`; throws unless the store is writable and open.
    func open(_ which: Store.AuxiliaryDatabase) throws -> Database {
        try access.require()
        return try handles.open(which, create: true, in: environment)!
    }

    /// Opens `which` if it exists.
    func existing(_ which: Store.AuxiliaryDatabase) throws -> Database? {
        try handles.open(which, create: false, in: environment)
    }

    /// Every entry of `which` in key order, each made by `decode` from its seq key (0 when the
    /// key is not 8 bytes) and its value; empty when the database does not exist.
    func entries<Entry>(of which: Store.AuxiliaryDatabase, _ decode: (UInt64, UnsafeRawBufferPointer) throws -> Entry) throws -> [Entry] {
        guard let database = try existing(which) else { return [] }
        return try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                var entries: [Entry] = []
                var entry = try cursor.first()
                while let current = entry {
                    entries.append(try decode(SeqKey(bytes: current.key)?.seq ?? 0, current.value))
                    entry = try cursor.next()
                }
                return entries
            }
        }
    }

    /// Deletes the entry of `which` under seq key `key`; returns whether there was one.
    /// Throws unless the store is writable and open.
    func remove(_ key: UInt64, from which: Store.AuxiliaryDatabase) throws -> Bool {
        try access.require()
        guard let database = try existing(which) else { return false }
        return try environment.storeWrite { txn in try txn.delete(database, key: SeqKey(key).bytes) }
    }
}
