import LMDB

extension Store {
    /// The `meta` key of the retired `digests` index: the last seq it covered.
    static let digestsThroughKey = Array("digestsThrough".utf8)

    /// Empties the `digests` database and deletes `meta` `digestsThrough`, which stores
    /// written before the index was retired may hold (payload digest → seq; nothing reads
    /// or writes them now). A purge calls this, so that the purged account's payload digests
    /// do not outlive it; it does nothing on a store without them.
    func removeRetiredDigestIndex() throws {
        guard let database = try existingAuxiliary(.digests) else { return }
        try environment.write { txn in
            try txn.removeAll(database)
            _ = try txn.delete(databases.meta, key: Self.digestsThroughKey)
        }
    }
}
