import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// How much of `data.mdb` an open checks before LMDB maps it (see ``DataFile``).
    package enum PageCheck: Sendable, Hashable {
        /// Only the meta pages and the file's size; the B-tree walk runs when those give
        /// reason to doubt (the file is shorter than the pages the newest commit records).
        case whenSuspicious
        /// The meta pages, the size and a walk of every B-tree page the newest commit uses
        /// (about 20 ms per 100 MB of data file, read from the page cache).
        case always
    }
}

extension DataFile {
    /// The checks an open makes before LMDB may touch a page of `directory/data.mdb`: both
    /// meta pages valid and distinct (LMDB refuses a file with an invalid one, and two meta
    /// pages with one txnid mean one was copied over the other, so the newest commit may be
    /// lost), the page size sane, the file long enough for both. Returns whether a B-tree
    /// walk is called for: the file is shorter than the last page the newest commit records.
    /// A missing file passes (LMDB creates it); an empty one throws unless `allowEmpty`.
    static func checkHeader(directory: String, allowEmpty: Bool) throws(LMDBError) -> Bool {
        let path = directory + "/data.mdb"
        guard let file = try DataFile(path: path) else { return false }
        if file.size == 0 {
            if allowEmpty { return false }
            throw corrupted(directory, DataFileDamage(file: path, page: nil, kind: .truncated, reason: "the file is empty (0 bytes)"))
        }
        let header = file.header()
        for case .failure(let damage) in header.metas {
            throw corrupted(directory, damage)
        }
        guard let newest = header.newest, let previous = header.previous else {
            preconditionFailure("two valid meta pages but no newest")
        }
        if newest.transactionId == previous.transactionId && newest.transactionId != 0 {
            throw corrupted(directory, DataFileDamage(
                file: path, page: newest.index, kind: .meta,
                reason: "both meta pages record transaction \(newest.transactionId): one was copied over the other, "
                    + "so the last commit may be lost"))
        }
        // Each commit writes the meta page the one before it did not, with the next txnid,
        // so the two differ by exactly one (a compacting copy writes 0 and 1). Any other
        // pair means a damaged txnid, or a meta page that is not the one LMDB last wrote.
        if newest.transactionId != previous.transactionId + 1 && newest.transactionId != previous.transactionId {
            throw corrupted(directory, DataFileDamage(
                file: path, page: newest.index, kind: .meta,
                reason: "the meta pages record transactions \(newest.transactionId) and \(previous.transactionId), but "
                    + "commits leave consecutive ones: one meta page was damaged or replaced, and LMDB would read "
                    + "meta page \(newest.index)'s commit, which may be wrong or stale"))
        }
        // A commit never gives pages back to the file: its last page is at least the one
        // before's. A lower one is damage, and a write would then allocate pages still in use.
        if newest.transactionId == previous.transactionId + 1 && newest.lastPage < previous.lastPage {
            throw corrupted(directory, DataFileDamage(
                file: path, page: newest.index, kind: .meta,
                reason: "meta page \(newest.index) records its commit's last page as \(newest.lastPage), below the "
                    + "previous commit's \(previous.lastPage), but commits never give pages back: the meta page is damaged, "
                    + "and a write would reuse pages still in use"))
        }
        for meta in [newest, previous] where meta.recordedPageNumber != UInt64(meta.index) {
            throw corrupted(directory, DataFileDamage(
                file: path, page: meta.index, kind: .meta,
                reason: "meta page \(meta.index) carries the header of page \(meta.recordedPageNumber): the meta pages "
                    + "were moved or overwritten, so LMDB may read a stale commit"))
        }
        if newest.pageSize != previous.pageSize {
            throw corrupted(directory, DataFileDamage(
                file: path, page: newest.index, kind: .meta,
                reason: "the meta pages record different page sizes (\(newest.pageSize), \(previous.pageSize))"))
        }
        if file.size < 2 * newest.pageSize {
            throw corrupted(directory, DataFileDamage(
                file: path, page: nil, kind: .truncated,
                reason: "the file is \(file.size) bytes, too short for its two meta pages of \(newest.pageSize) bytes: it was cut short"))
        }
        return UInt64(file.size / newest.pageSize) <= newest.lastPage
    }

    /// Walks the B-trees of the commit that LMDB's read transaction `txn` sees (found by its
    /// txnid, so a writer committing meanwhile in another process cannot change the pages
    /// walked: the transaction keeps them from reuse). Throws the first problem, saying
    /// whether the previous commit is intact.
    static func checkPages(directory: String, transactionId: UInt64, verdicts: String? = nil) throws(LMDBError) {
        let path = directory + "/data.mdb"
        if let verdicts, WalkVerdicts.remembers(directory: verdicts, file: path, transactionId: transactionId) { return }
        guard let file = try DataFile(path: path) else { return }
        WalkVerdicts.walks.add(1, ordering: .relaxed)
        let header = file.header()
        let metas = header.metas.compactMap { try? $0.get() }
        // A writer may have committed twice since the transaction began and overwritten its
        // meta page; its pages are then held for it but no longer described: skip the walk.
        guard let meta = metas.first(where: { $0.transactionId == transactionId }) else { return }
        guard var damage = file.walk(meta, stopAtFirst: true).damage.first else {
            if let verdicts { WalkVerdicts.remember(directory: verdicts, file: path, transactionId: transactionId) }
            return
        }
        if let other = metas.first(where: { $0.index != meta.index }), other.transactionId < meta.transactionId,
            file.walk(other, stopAtFirst: true).damage.isEmpty
        {
            damage.reason += "; the previous commit (transaction \(other.transactionId)) is intact, and `herald salvage` reads it"
        }
        throw corrupted(directory, damage)
    }

    static func corrupted(_ directory: String, _ damage: DataFileDamage) -> LMDBError {
        var error = LMDBError(code: MDB_CORRUPTED, operation: "check data.mdb", path: directory, reason: damage.reason)
        error.damage = damage
        return error
    }
}

extension SharedEnvironment {
    /// Runs ``DataFile/checkPages(directory:transactionId:)`` on a just-opened handle.
    static func checkPages(_ handle: OpaquePointer, path: String, verdicts: String?) throws(LMDBError) {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin", path: path)
        guard let txn else { return }
        defer { mdb_txn_abort(txn) }
        try DataFile.checkPages(directory: path, transactionId: UInt64(mdb_txn_id(txn)), verdicts: verdicts)
    }
}
