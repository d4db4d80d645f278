extension Store {
    /// Removes a stored key and leaves no copy of it in the data file: LMDB does not clear the
    /// pages a delete frees, so, as purge does for records, the store is rewritten by a
    /// compacting copy (live pages only) that is renamed over `data.mdb`. Runs on a closed
    /// store, with the writer lock (``StoreError/locked(path:holder:)`` while a writer is
    /// open). Returns whether the key existed.
    public static func removeKey(path: String, id: Int64, options: Options = Options()) throws -> Bool {
        try withExclusiveStore(path: path, options: options) { store in
            try store.keyring.remove(id: id)
        }
    }
}
