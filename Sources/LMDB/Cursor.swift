import CLMDB

/// A position in one database, valid inside ``Transaction/withCursor(_:_:)`` only.
package struct Cursor: ~Copyable {
    private let handle: OpaquePointer
    private let database: Database
    private let path: String

    /// One key/value pair. Both point into LMDB's map: valid until the transaction ends or
    /// the next write in it.
    package struct Entry {
        package var key: UnsafeRawBufferPointer
        package var value: UnsafeRawBufferPointer
    }

    init(transaction: OpaquePointer, database: Database, path: String) throws(LMDBError) {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction, database.handle, &cursor), "mdb_cursor_open(\(database.name))", path: path)
        guard let cursor else { preconditionFailure("mdb_cursor_open returned no handle") }
        self.handle = cursor
        self.database = database
        self.path = path
    }

    deinit {
        mdb_cursor_close(handle)
    }

    private func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_cursor_get(\(database.name))", path: path)
        return Entry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Moves to the first entry (`MDB_FIRST`).
    package mutating func first() throws(LMDBError) -> Entry? { try get(MDB_FIRST) }
    /// Moves to the last entry (`MDB_LAST`).
    package mutating func last() throws(LMDBError) -> Entry? { try get(MDB_LAST) }
    /// Moves to the next entry (`MDB_NEXT`).
    package mutating func next() throws(LMDBError) -> Entry? { try get(MDB_NEXT) }
    /// Moves to the previous entry (`MDB_PREV`).
    package mutating func previous() throws(LMDBError) -> Entry? { try get(MDB_PREV) }

    /// Moves to the first entry whose key is `>= key` (`MDB_SET_RANGE`).
    package mutating func seek(atLeast key: [UInt8]) throws -> Entry? {
        try key.withUnsafeBytes { (k) throws -> Entry? in try get(MDB_SET_RANGE, key: k) }
    }

    /// Deletes the entry at the cursor (`mdb_cursor_del`); the cursor then sits on the next one,
    /// which ``current()`` returns.
    package mutating func deleteCurrent() throws(LMDBError) {
        try check(mdb_cursor_del(handle, 0), "mdb_cursor_del(\(database.name))", path: path)
    }

    /// The entry at the cursor (`MDB_GET_CURRENT`).
    package mutating func current() throws(LMDBError) -> Entry? { try get(MDB_GET_CURRENT) }
}
