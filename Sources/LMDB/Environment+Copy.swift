import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// Writes a copy of the environment's data file to `file`, a new file created with
    /// `mode` (never over an existing one: `O_EXCL`), and fsyncs it before returning.
    ///
    /// With `compact`, free pages are omitted and pages renumbered (`MDB_CP_COMPACT`). The copy
    /// is one read transaction's view: lmdb.h, `mdb_env_copy2`: "This function may be used to
    /// make a backup of an existing environment. No lockfile is created, since it gets
    /// recreated at need." Writers, here and in other processes, go on meanwhile; a writer of
    /// this process that must grow the map waits until the copy ends (the copy holds the
    /// resize lock shared, as a transaction does).
    ///
    /// Returns the id of the last committed write transaction as seen just before the copy
    /// started (``Info/lastTransactionId``), so that a caller copying several environments can
    /// tell whether one changed while it copied the others.
    @discardableResult
    package func copy(toFile file: String, compact: Bool, mode: mode_t = 0o600) throws(LMDBError) -> Int {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw LMDBError(code: errno, operation: "open (copy destination)", path: file) }
        defer { close(descriptor) }
        // The umask may have taken bits away from `mode`; never more than asked are added.
        guard fchmod(descriptor, mode) == 0 else { throw LMDBError(code: errno, operation: "fchmod", path: file) }
        let flags = compact ? UInt32(MDB_CP_COMPACT) : 0
        let transactionId = try resizeLock.withShared { () throws(LMDBError) -> Int in
            try requireOpen("mdb_env_copyfd2")
            let before = info().lastTransactionId
            // lmdb.h, mdb_env_copyfd2: "fd: The filedescriptor to write the copy to. It must
            // have already been opened for Write access."
            try check(mdb_env_copyfd2(handle, descriptor, flags), "mdb_env_copyfd2", path: path)
            return before
        }
        guard fsync(descriptor) == 0 else { throw LMDBError(code: errno, operation: "fsync", path: file) }
        return transactionId
    }
}
