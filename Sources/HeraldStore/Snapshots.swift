import LMDB

/// The snapshots a store keeps (its `snapshots` database): the state as of a seq, from which
/// an open restores instead of replaying the whole log.
///
/// Reach it through ``Store/snapshots``; take one with `store.snapshot()` (also `async`).
/// Automatic snapshots (``Store/Options/snapshotInterval``) are written in the background, so wait for
/// them with ``waitUntilIdle()`` before relying on one being stored. It holds the store's
/// environment and snapshot writer, not the store.
///
/// ```swift
/// let store = try Store(path: "/path/to/herald.db")
/// try store.append(contentsOf: events)
/// store.snapshots.waitUntilIdle()
/// print(try store.snapshots.seqs())  // oldest first, e.g. [50_000, 100_000]
/// ```
public struct Snapshots: Sendable {
    let environment: Environment
    let handles: Store.AuxiliaryHandles
    let writer: SnapshotWriter

    /// The seqs of the stored snapshots, oldest first, whether they are valid or not; empty
    /// when the store never kept one.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/lmdb`` when the database cannot
    ///   be read.
    public func seqs() throws -> [UInt64] {
        guard let database = try handles.open(.snapshots, create: false, in: environment) else { return [] }
        return try environment.storeRead { txn in try Store.snapshotSeqs(database, txn) }
    }

    /// Returns once no automatic snapshot (see ``Store/Options/snapshotInterval``) is being
    /// encoded or written.
    ///
    /// Appends never wait for automatic snapshots: they are written on a queue of the store.
    /// Call this before relying on one being stored, such as before the process exits after a
    /// bulk load, or in a test that reads ``seqs()``. A snapshot started by a commit that ends
    /// after this call began may still be in flight on return. Closing the store (or its
    /// deinit) waits in the same way.
    public func waitUntilIdle() {
        writer.waitUntilIdle()
    }
}

extension Store {
    /// The snapshots the store keeps (``Snapshots``).
    public var snapshots: Snapshots {
        Snapshots(environment: environment, handles: auxiliaryHandles, writer: snapshotWriter)
    }
}
