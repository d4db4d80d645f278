import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A live LMDB transaction, valid only inside the ``Environment/read(_:)`` or
/// ``Environment/write(_:)`` closure that received it.
///
/// Bytes it returns point into LMDB's memory map: they are valid until the transaction ends
/// (and, in a write transaction, until the next write). Copy out what must live longer.
package struct Transaction: ~Copyable {
    let handle: OpaquePointer
    /// Unowned: a transaction never outlives the closure its environment runs.
    private let environment: Unmanaged<Environment>
    /// Whether the transaction is read-only.
    package let isReadOnly: Bool

    init(environment: Environment, readOnly: Bool) throws(LMDBError) {
        try environment.requireOpen("mdb_txn_begin")
        var txn: OpaquePointer?
        let flags = readOnly ? UInt32(MDB_RDONLY) : 0
        try check(mdb_txn_begin(environment.handle, nil, flags, &txn), "mdb_txn_begin", path: environment.path)
        guard let txn else { preconditionFailure("mdb_txn_begin returned no handle") }
        self.handle = txn
        self.environment = .passUnretained(environment)
        self.isReadOnly = readOnly
    }

    deinit {
        mdb_txn_abort(handle)
    }

    var path: String { environment.takeUnretainedValue().path }

    /// Commits. lmdb.h: the transaction handle is freed whether or not the commit succeeds.
    consuming func commit() throws(LMDBError) {
        let handle = self.handle
        let path = self.path
        discard self
        var code = mdb_txn_commit(handle)
        if code == EIO && Self.fileSystemIsFull(path) {
            // mdb.c answers EIO for a short write, which is what a full disk gives; say so
            // only when the file system is in fact full, else it may be a real I/O error.
            code = ENOSPC
        }
        try check(code, "mdb_txn_commit", path: path)
    }

    /// Whether the file system holding `path` has no block left for an unprivileged write
    /// (`statvfs`'s `f_bavail` below 16 blocks).
    static func fileSystemIsFull(_ path: String) -> Bool {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return false }
        return status.f_bavail < 16
    }

    /// Keeps written zeros in the data file past the pages in use, a quarter of the bytes in
    /// use ahead (at least 64 KiB, at most `limit`, never past the map), so that a young
    /// store does not pay for a large write at once: when the pages in use come within half
    /// that distance of where the last call's zeros end, writes zeros up to the full
    /// distance past the last page in use. Commits then write their new pages over blocks
    /// the file already has, so their fsync has no file growth or block allocation to
    /// journal as well (on ext4 that is a journal commit on top of the data flush). Best
    /// effort: if the zeros cannot be written, the commit that follows meets and reports
    /// the problem.
    ///
    /// Call it first in a write transaction, before any write: LMDB writes pages past the
    /// last one in use only when a write transaction spills or commits, and one runs at a
    /// time, so the zeros never cover a page LMDB has written. It never reads a page past
    /// the last one in use (`me_last_pgno`), so the zeros are not data, and a copy leaves
    /// them out.
    package func preallocate(limit: Int) {
        precondition(!isReadOnly, "preallocate in a read-only transaction: \(path)")
        let environment = environment.takeUnretainedValue()
        let info = environment.info()
        let ahead = min(max(info.usedBytes / 4, 64 << 10), limit)
        guard info.usedBytes + ahead / 2 > environment.preallocatedEnd else { return }
        // Whatever happens below, try again only once another `ahead / 2` bytes are in use.
        environment.preallocatedEnd = info.usedBytes + ahead
        // lmdb.h, mdb_env_get_fd: "Return the filedescriptor for the given environment."
        var descriptor: mdb_filehandle_t = -1
        var status = stat()
        guard mdb_env_get_fd(environment.handle, &descriptor) == 0, fstat(descriptor, &status) == 0 else { return }
        var offset = max(Int(status.st_size), info.usedBytes)
        let end = min(info.usedBytes + ahead, info.mapSize)
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        while offset < end {
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, min($0.count, end - offset), off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    func openDatabase(_ name: String, create: Bool) throws(LMDBError) -> Database? {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_dbi_open(\(name))", path: path)
        // LMDB takes a named database's flags from its record in the main database. Herald
        // sets none; a damaged record with, say, the sorted-duplicates bit would have LMDB
        // read its pages as what they are not (and a writable open does not walk them first).
        var flags: UInt32 = 0
        try check(mdb_dbi_flags(handle, dbi, &flags), "mdb_dbi_flags(\(name))", path: path)
        let persistent = flags & UInt32(MDB_REVERSEKEY | MDB_DUPSORT | MDB_INTEGERKEY | MDB_DUPFIXED | MDB_INTEGERDUP | MDB_REVERSEDUP)
        guard persistent == 0 else {
            // The handle stays private to this transaction, which the error ends (aborted),
            // and LMDB closes it then.
            throw LMDBError(
                code: MDB_CORRUPTED, operation: "mdb_dbi_open(\(name))", path: path,
                reason: "database `\(name)` records flags 0x\(String(persistent, radix: 16)), which Herald never sets: "
                    + "its record in the main database is damaged")
        }
        return Database(handle: dbi, name: name)
    }

    /// The value stored under `key`, or `nil` (`MDB_NOTFOUND` is not an error).
    package func get(_ database: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(handle, database.handle, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get(\(database.name))", path: path)
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    /// The value stored under `key`, copied out, or `nil`.
    package func get(_ database: Database, key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { (k) throws -> [UInt8]? in
            try get(database, key: k).map { Array($0) }
        }
    }

    /// How ``put(_:key:value:flags:)`` stores.
    package struct PutFlags: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// `MDB_APPEND`: the key sorts after every key present (fast bulk load); a key out of
        /// order fails with `MDB_KEYEXIST`.
        package static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
        /// `MDB_NOOVERWRITE`: fail with `MDB_KEYEXIST` when the key is present.
        package static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    }

    /// Stores `value` under `key`.
    package func put(
        _ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws(LMDBError) {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        try check(mdb_put(handle, database.handle, &k, &v, flags.rawValue), "mdb_put(\(database.name))", path: path)
    }

    /// Stores `value` under `key`.
    package func put(_ database: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws {
        try key.withUnsafeBytes { (k) throws in
            try value.withUnsafeBytes { (v) throws in
                try put(database, key: k, value: v, flags: flags)
            }
        }
    }

    /// Deletes `key`; returns whether it was present.
    @discardableResult
    package func delete(_ database: Database, key: [UInt8]) throws -> Bool {
        try key.withUnsafeBytes { (k) throws -> Bool in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            let rc = mdb_del(handle, database.handle, &kv, nil)
            if rc == MDB_NOTFOUND { return false }
            try check(rc, "mdb_del(\(database.name))", path: path)
            return true
        }
    }

    /// Removes every entry of `database` (`mdb_drop` with del = 0).
    package func removeAll(_ database: Database) throws(LMDBError) {
        try check(mdb_drop(handle, database.handle, 0), "mdb_drop(\(database.name))", path: path)
    }

    /// The number of entries in `database` (`mdb_stat`).
    package func count(_ database: Database) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat), "mdb_stat(\(database.name))", path: path)
        return stat.ms_entries
    }

    /// The bytes of the pages `database` occupies (branch, leaf and overflow pages, from
    /// `mdb_stat`, times the page size).
    package func bytes(_ database: Database) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, database.handle, &stat), "mdb_stat(\(database.name))", path: path)
        return (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
    }

    /// Runs `body` with a cursor over `database`; the cursor is closed when `body` returns.
    package func withCursor<R>(_ database: Database, _ body: (inout Cursor) throws -> R) throws -> R {
        var cursor = try Cursor(transaction: handle, database: database, path: path)
        return try body(&cursor)
    }
}
