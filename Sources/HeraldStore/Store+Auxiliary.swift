import LMDB

extension Store {
    /// Named databases besides `log` and `meta`, created the first time they are written.
    enum AuxiliaryDatabase: String, CaseIterable {
        case snapshots, quarantine, keys, gaps
    }

    /// Opens (creating) an auxiliary database; needs a writable store.
    func auxiliary(_ which: AuxiliaryDatabase) throws -> Database {
        guard !options.readOnly else { throw StoreError.readOnly(path: path) }
        return try openAuxiliary(which, create: true)!
    }

    /// Opens an auxiliary database if it exists.
    func existingAuxiliary(_ which: AuxiliaryDatabase) throws -> Database? {
        try openAuxiliary(which, create: false)
    }

    private func openAuxiliary(_ which: AuxiliaryDatabase, create: Bool) throws -> Database? {
        try auxiliaryHandles.withLock { handles in
            if let database = handles[which.rawValue] { return database }
            let database = try environment.openDatabase(which.rawValue, create: create)
            handles[which.rawValue] = database
            return database
        }
    }
}
