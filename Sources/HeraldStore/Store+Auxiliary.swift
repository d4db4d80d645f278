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
                let database = try environment.openDatabase(which.rawValue, create: create)
                handles[which.rawValue] = database
                return database
            }
        }
    }
}
