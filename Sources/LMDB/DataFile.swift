#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads an LMDB data file (`data.mdb`) with plain `pread`, never through a memory map, so
/// that a damaged or cut-short file is reported instead of crashing the process: LMDB trusts
/// every page pointer it follows and dies with SIGBUS past the end of the file, or with an
/// assertion or SIGSEGV on a page that is not what its parent says.
///
/// The layout read here is LMDB 0.9's on-disk format (mdb.c, 64-bit): a page begins with a
/// 16-byte header (`mp_pgno` u64, `mp_pad` u16, `mp_flags` u16, `mp_lower` u16, `mp_upper`
/// u16; an overflow page has `mp_pages` u32 in place of lower and upper), then an array of
/// u16 node offsets. Pages 0 and 1 are meta pages (`P_META`): after the header,
/// `mm_magic` u32 (`0xBEEFC0DE`), `mm_version` u32 (1), `mm_address`, `mm_mapsize`, two
/// `MDB_db` records of 48 bytes (free list, main database; the free list's `md_pad` holds the
/// page size), `mm_last_pg` u64, `mm_txnid` u64. LMDB uses the meta page with the higher
/// txnid. A node is `mn_lo` u16, `mn_hi` u16, `mn_flags` u16, `mn_ksize` u16, the key, then
/// (on a leaf) the value, or the u64 page number of its first overflow page (`F_BIGDATA`); a
/// branch node's child page number is `mn_lo | mn_hi << 16 | mn_flags << 32`. Integers are
/// in the machine's byte order (little-endian on every platform Herald builds for).
package final class DataFile {
    /// The path of the file, as given.
    package let path: String
    let descriptor: Int32
    /// The file's size in bytes when it was opened.
    package let size: Int

    /// Opens `path` for reading; `nil` when it does not exist.
    package init?(path: String) throws(LMDBError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw LMDBError(code: errno, operation: "open", path: path)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw LMDBError(code: code, operation: "fstat", path: path)
        }
        self.path = path
        self.descriptor = descriptor
        self.size = Int(status.st_size)
    }

    deinit { close(descriptor) }

    /// `count` bytes at `offset`, or `nil` when the file ends (or a read fails) before them.
    func bytes(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= size else { return nil }
        // Not zeroed first: every byte is read into, or the result is dropped.
        var complete = false
        let buffer = [UInt8](unsafeUninitializedCapacity: count) { raw, initialized in
            var done = 0
            while done < count {
                let read = pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset + done))
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else { break }
                done += read
            }
            // Bytes are trivial: counting them all initialized is sound, and they are all
            // written when the read completed.
            initialized = count
            complete = done == count
        }
        return complete ? buffer : nil
    }

    // MARK: Meta pages

    /// One of the two meta pages, as read.
    package struct Meta: Sendable, Hashable {
        /// 0 or 1: where it was read.
        package var index: Int
        /// `mm_txnid`: the transaction that wrote it.
        package var transactionId: UInt64
        /// `mm_last_pg`: the last page in use then.
        package var lastPage: UInt64
        /// The page size it records.
        package var pageSize: Int
        /// The free-list and main databases' records.
        package var freeList: Tree
        package var main: Tree
        /// The page number in the meta page's own header (it should equal ``index``).
        package var recordedPageNumber: UInt64
    }

    /// An `MDB_db` record: one B-tree's root, depth and counts.
    package struct Tree: Sendable, Hashable {
        package var flags: UInt16
        package var depth: UInt16
        package var branchPages: UInt64
        package var leafPages: UInt64
        package var overflowPages: UInt64
        package var entries: UInt64
        /// `md_root`; `P_INVALID` (all ones) for an empty tree.
        package var root: UInt64

        init(_ bytes: ArraySlice<UInt8>) {
            let base = bytes.startIndex
            flags = UInt16(bytes.loadLittleEndian(at: base + 4, as: UInt16.self))
            depth = bytes.loadLittleEndian(at: base + 6, as: UInt16.self)
            branchPages = bytes.loadLittleEndian(at: base + 8, as: UInt64.self)
            leafPages = bytes.loadLittleEndian(at: base + 16, as: UInt64.self)
            overflowPages = bytes.loadLittleEndian(at: base + 24, as: UInt64.self)
            entries = bytes.loadLittleEndian(at: base + 32, as: UInt64.self)
            root = bytes.loadLittleEndian(at: base + 40, as: UInt64.self)
        }

        var isEmpty: Bool { root == DataFile.invalidPage }
    }

    static let headerSize = 16
    static let metaMagic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let invalidPage = UInt64.max
    static let branchFlag: UInt16 = 0x01
    static let leafFlag: UInt16 = 0x02
    static let overflowFlag: UInt16 = 0x04
    static let metaFlag: UInt16 = 0x08
    /// `MDB_INTEGERKEY`, as a database record's flags.
    static let integerKeyFlag: UInt16 = 0x08
    /// `P_DIRTY`, `P_LOOSE`, `P_KEEP`: in-memory states a page may carry to disk harmlessly.
    static let transientFlags: UInt16 = 0x10 | 0x4000 | 0x8000
    static let nodeHeaderSize = 8
    static let bigData: UInt16 = 0x01
    static let subDatabase: UInt16 = 0x02
    static let duplicates: UInt16 = 0x04

    /// Reads meta page `index` (at `index * pageSize`); the reason it is unusable otherwise.
    func meta(_ index: Int, pageSize: Int) -> Result<Meta, DataFileDamage> {
        let offset = index * pageSize
        guard let page = bytes(at: offset, count: 160) else {
            return .failure(damage(
                page: index, .truncated, "the file is \(size) bytes, too short to hold meta page \(index): it was cut short"))
        }
        let flags = page.loadLittleEndian(at: 10, as: UInt16.self)
        guard flags & Self.metaFlag != 0 else {
            return .failure(damage(page: index, .meta, "meta page \(index) is not marked as a meta page (flags 0x\(String(flags, radix: 16)))"))
        }
        let magic = page.loadLittleEndian(at: 16, as: UInt32.self)
        guard magic == Self.metaMagic else {
            return .failure(damage(page: index, .meta, "meta page \(index) lacks LMDB's magic number (found 0x\(String(magic, radix: 16)))"))
        }
        let version = page.loadLittleEndian(at: 20, as: UInt32.self)
        guard version == Self.dataVersion else {
            return .failure(damage(page: index, .meta, "meta page \(index) has data format version \(version), not \(Self.dataVersion)"))
        }
        let pageSize = Int(page.loadLittleEndian(at: 40, as: UInt32.self))
        guard Self.isSanePageSize(pageSize) else {
            return .failure(damage(page: index, .meta, "meta page \(index) records a page size of \(pageSize) bytes"))
        }
        // LMDB keys its free list by transaction id (MDB_INTEGERKEY) in every file, and Herald
        // sets no flag on the main database. Any other bit is damage that LMDB would act on:
        // a sorted-duplicates bit on the free list makes its next write abort the process.
        let freeListFlags = page.loadLittleEndian(at: 44, as: UInt16.self)
        guard freeListFlags == Self.integerKeyFlag else {
            return .failure(damage(
                page: index, .meta,
                "meta page \(index) records flags 0x\(String(freeListFlags, radix: 16)) for LMDB's free list, which LMDB "
                    + "always keys by integer (0x8): the meta page is damaged"))
        }
        let mainFlags = page.loadLittleEndian(at: 92, as: UInt16.self)
        guard mainFlags == 0 else {
            return .failure(damage(
                page: index, .meta,
                "meta page \(index) records flags 0x\(String(mainFlags, radix: 16)) for the main database, which Herald "
                    + "never sets: the meta page is damaged"))
        }
        return .success(Meta(
            index: index, transactionId: page.loadLittleEndian(at: 144, as: UInt64.self),
            lastPage: page.loadLittleEndian(at: 136, as: UInt64.self), pageSize: pageSize,
            freeList: Tree(page[40..<88]), main: Tree(page[88..<136]),
            recordedPageNumber: page.loadLittleEndian(at: 0, as: UInt64.self)))
    }

    static func isSanePageSize(_ size: Int) -> Bool {
        size >= 512 && size <= 65_536 && size & (size - 1) == 0
    }

    /// What the meta pages say: both, as read, and the one LMDB would use (the valid one
    /// with the higher txnid; LMDB itself refuses the file when either is invalid).
    package struct Header: Sendable {
        package var metas: [Result<Meta, DataFileDamage>]
        package var newest: Meta?
        /// The valid meta page older than ``newest``, when there is one.
        package var previous: Meta? {
            guard let newest else { return nil }
            return metas.compactMap { try? $0.get() }.first { $0.index != newest.index }
        }
    }

    /// Reads both meta pages. Meta page 1 is located with meta page 0's page size when that
    /// is valid, else with the system's page size.
    package func header() -> Header {
        let first = meta(0, pageSize: 4096)
        let pageSize = (try? first.get())?.pageSize ?? Int(sysconf(Int32(_SC_PAGESIZE)))
        let second = meta(1, pageSize: pageSize)
        let valid = [first, second].compactMap { try? $0.get() }
        return Header(metas: [first, second], newest: valid.max { $0.transactionId < $1.transactionId })
    }

    func damage(page: Int?, _ kind: DataFileDamage.Kind, _ reason: String) -> DataFileDamage {
        DataFileDamage(file: path, page: page, kind: kind, reason: reason)
    }
}

/// Why a data file cannot be trusted: the file, the page where known, and what is wrong.
package struct DataFileDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of damage, for callers that advise differently.
    package enum Kind: Sendable, Hashable {
        /// The file ends before a page the newest commit uses.
        case truncated
        /// A meta page is unusable, or the two disagree in a way LMDB never leaves them.
        case meta
        /// A B-tree page is not what its parent says.
        case page
    }
    /// The data file's path.
    package var file: String
    /// The page at fault, when known.
    package var page: Int?
    package var kind: Kind
    /// What is wrong, in words.
    package var reason: String

    package init(file: String, page: Int?, kind: Kind, reason: String) {
        self.file = file
        self.page = page
        self.kind = kind
        self.reason = reason
    }

    package var description: String { "\(file): \(reason)" }
}

extension Array<UInt8> {
    /// The little-endian integer of type `T` at `offset` (0 past the end): one unaligned load,
    /// where the `Collection` version reads byte by byte through the generic subscript (a
    /// third of the page walk's instructions).
    @inline(__always)
    func loadLittleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type) -> T {
        guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return 0 }
        return withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}

extension Collection<UInt8> where Index == Int {
    /// The little-endian integer of type `T` at `offset` (0 past the end).
    func loadLittleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type) -> T {
        var value: T = 0
        let width = T.bitWidth / 8
        guard offset >= startIndex, offset + width <= endIndex else { return 0 }
        for index in (0..<width).reversed() { value = value << 8 | T(self[offset + index]) }
        return value
    }
}
