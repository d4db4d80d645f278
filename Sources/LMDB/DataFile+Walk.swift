#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DataFile {
    /// What a walk of the B-trees found.
    package struct WalkReport: Sendable {
        /// Every problem found; with `stopAtFirst`, at most one.
        package var damage: [DataFileDamage] = []
        /// Pages read.
        package var pagesVisited = 0
        /// The named databases found in the main database, with their records.
        package var databases: [String: Tree] = [:]
    }

    /// Checks the structure of every B-tree the commit of `meta` uses (the free list, the
    /// main database and each named database in it) by reading its pages with `pread`:
    /// each page number lies in the file and at most at the meta page's last page, is
    /// reached once (no cycle, no page shared by two parents), carries its own number and
    /// the branch or leaf flag its depth calls for, has sane `lower`/`upper` bounds and node
    /// offsets; each node's key and value lie inside the page; keys are in strictly
    /// increasing byte order and inside the range their parent gives; overflow pages are
    /// marked as such and lie in the file; each tree's entry count matches its record.
    ///
    /// With `visit`, calls it with the database name, key and value of every leaf entry of
    /// the named databases that can be reached (values on overflow pages are read whole).
    /// With `stopAtFirst` the walk ends at the first problem; otherwise it skips the damaged
    /// page (and what hangs below it) and goes on, to reach every entry that can be had.
    package func walk(
        _ meta: Meta, stopAtFirst: Bool,
        visit: ((_ database: String, _ key: [UInt8], _ value: [UInt8]) -> Void)? = nil
    ) -> WalkReport {
        var walker = Walker(file: self, meta: meta, stopAtFirst: stopAtFirst, visit: visit)
        walker.run()
        return walker.report
    }
}

/// One walk of ``DataFile/walk(_:stopAtFirst:visit:)``.
private struct Walker {
    let file: DataFile
    let meta: DataFile.Meta
    let stopAtFirst: Bool
    let visit: ((String, [UInt8], [UInt8]) -> Void)?
    let pageSize: Int
    /// Pages the file holds whole.
    let filePages: UInt64
    var visited: [UInt64]
    var report = DataFile.WalkReport()

    init(file: DataFile, meta: DataFile.Meta, stopAtFirst: Bool, visit: ((String, [UInt8], [UInt8]) -> Void)?) {
        self.file = file
        self.meta = meta
        self.stopAtFirst = stopAtFirst
        self.visit = visit
        pageSize = meta.pageSize
        filePages = UInt64(file.size / meta.pageSize)
        visited = [UInt64](repeating: 0, count: Int(min(filePages, meta.lastPage + 1)) / 64 + 1)
    }

    var done: Bool { stopAtFirst && !report.damage.isEmpty }

    mutating func fail(_ page: UInt64?, _ kind: DataFileDamage.Kind, _ reason: String) {
        report.damage.append(file.damage(page: page.map { Int(truncatingIfNeeded: $0) }, kind, reason))
    }

    mutating func run() {
        if meta.lastPage + 1 > filePages, meta.lastPage > 1 {
            // Not damage by itself: LMDB may leave the last pages, when free, unwritten.
        }
        walkTree("the free list", meta.freeList, ordered: false, isMain: false)
        guard !done else { return }
        walkTree("the main database", meta.main, ordered: true, isMain: true)
        for name in report.databases.keys.sorted() {
            guard !done, let tree = report.databases[name] else { return }
            // MDB_REVERSEKEY (0x02), MDB_INTEGERKEY (0x08): not byte order. Herald uses neither.
            let ordered = tree.flags & (0x02 | 0x08) == 0
            walkTree("database `\(name)`", tree, ordered: ordered, isMain: false, name: name)
        }
    }

    /// A page waiting to be read: its number, its level from the root, and the key range its
    /// parent gives it (low inclusive, high exclusive).
    struct Pending {
        var page: UInt64
        var level: Int
        var low: [UInt8]?
        var high: [UInt8]?
        var parent: UInt64?
    }

    func describe(_ page: UInt64?) -> String { page.map { "page \($0)" } ?? "the meta page" }

    /// Checks a page number before it is followed; marks it visited.
    mutating func admit(_ page: UInt64, from parent: UInt64?, in tree: String) -> Bool {
        if page < 2 {
            fail(page, .page, "\(describe(parent)) of \(tree) points at page \(page), a meta page")
            return false
        }
        if page > meta.lastPage {
            fail(
                page, .page,
                "\(describe(parent)) of \(tree) points at page \(page), beyond the last page in use (\(meta.lastPage)) "
                    + "that the newest commit (transaction \(meta.transactionId)) records")
            return false
        }
        if page >= filePages {
            fail(
                page, .truncated,
                "the file is \(file.size) bytes (\(filePages) pages of \(pageSize)) but \(tree) uses page \(page) "
                    + "(the newest commit, transaction \(meta.transactionId), records pages up to \(meta.lastPage)): "
                    + "the file was cut short")
            return false
        }
        let word = Int(page / 64)
        let bit = UInt64(1) << (page % 64)
        if visited[word] & bit != 0 {
            fail(page, .page, "page \(page) is reached twice (from \(describe(parent)) of \(tree)): the tree has a cycle or crossed pointers")
            return false
        }
        visited[word] |= bit
        return true
    }

    mutating func walkTree(_ tree: String, _ record: DataFile.Tree, ordered: Bool, isMain: Bool, name: String? = nil) {
        if record.isEmpty {
            if record.entries != 0 { fail(nil, .page, "\(tree) is empty but its record counts \(record.entries) entries") }
            return
        }
        guard record.depth >= 1, record.depth <= 32 else {
            fail(record.root, .page, "\(tree) records a depth of \(record.depth)")
            return
        }
        var stack = [Pending(page: record.root, level: 0, low: nil, high: nil, parent: nil)]
        var entries: UInt64 = 0
        var complete = true
        while let pending = stack.popLast(), !done {
            guard admit(pending.page, from: pending.parent, in: tree) else {
                complete = false
                continue
            }
            report.pagesVisited += 1
            guard let page = file.bytes(at: Int(pending.page) * pageSize, count: pageSize) else {
                fail(pending.page, .truncated, "page \(pending.page) of \(tree) cannot be read")
                complete = false
                continue
            }
            let isLeafLevel = pending.level == Int(record.depth) - 1
            guard let children = check(page, pending, isLeafLevel: isLeafLevel, tree: tree, ordered: ordered,
                isMain: isMain, name: name, entries: &entries)
            else {
                complete = false
                continue
            }
            stack.append(contentsOf: children.reversed())
        }
        if complete && !done && entries != record.entries {
            fail(record.root, .page, "\(tree) holds \(entries) entries but its record counts \(record.entries)")
        }
    }

    /// Checks one page; returns the children to visit (none for a leaf), or `nil` when the
    /// page is damaged.
    mutating func check(
        _ page: [UInt8], _ pending: Pending, isLeafLevel: Bool, tree: String, ordered: Bool, isMain: Bool,
        name: String?, entries: inout UInt64
    ) -> [Pending]? {
        let number = pending.page
        let recorded = page.loadLittleEndian(at: 0, as: UInt64.self)
        guard recorded == number else {
            fail(number, .page, "page \(number) of \(tree) carries the header of page \(recorded): it was overwritten or misplaced")
            return nil
        }
        let flags = page.loadLittleEndian(at: 10, as: UInt16.self) & ~DataFile.transientFlags
        let expected = isLeafLevel ? DataFile.leafFlag : DataFile.branchFlag
        guard flags == expected else {
            fail(
                number, .page,
                "page \(number) of \(tree) has flags 0x\(String(flags, radix: 16)) where a "
                    + "\(isLeafLevel ? "leaf" : "branch") page was expected (a zeroed or overwritten page)")
            return nil
        }
        let lower = Int(page.loadLittleEndian(at: 12, as: UInt16.self))
        let upper = Int(page.loadLittleEndian(at: 14, as: UInt16.self))
        guard lower >= DataFile.headerSize, lower % 2 == 0, lower <= upper, upper <= pageSize else {
            fail(number, .page, "page \(number) of \(tree) has free-space bounds \(lower)…\(upper) outside the page")
            return nil
        }
        let count = (lower - DataFile.headerSize) / 2
        guard count >= 1 else {
            fail(number, .page, "page \(number) of \(tree) holds no entries")
            return nil
        }
        var keys: [[UInt8]] = []
        var previousKey: Range<Int>?
        var children: [UInt64] = []
        var values: [(key: [UInt8], value: [UInt8])] = []
        for index in 0..<count {
            let offset = Int(page.loadLittleEndian(at: DataFile.headerSize + 2 * index, as: UInt16.self))
            guard offset >= upper, offset % 2 == 0, offset + DataFile.nodeHeaderSize <= pageSize else {
                fail(number, .page, "page \(number) of \(tree): entry \(index) lies at offset \(offset), outside the page's entries")
                return nil
            }
            let low = UInt64(page.loadLittleEndian(at: offset, as: UInt16.self))
            let high = UInt64(page.loadLittleEndian(at: offset + 2, as: UInt16.self))
            let nodeFlags = page.loadLittleEndian(at: offset + 4, as: UInt16.self)
            let keySize = Int(page.loadLittleEndian(at: offset + 6, as: UInt16.self))
            let keyStart = offset + DataFile.nodeHeaderSize
            guard keyStart + keySize <= pageSize else {
                fail(number, .page, "page \(number) of \(tree): the key of entry \(index) runs past the end of the page")
                return nil
            }
            let key = keyStart..<keyStart + keySize
            if ordered && (!isLeafLevel ? index >= 1 : true) {
                var problem: String?
                if let previous = previousKey, index >= (isLeafLevel ? 1 : 2), !Self.precedes(page, previous, page, key) {
                    problem = "the key of entry \(index)\(Self.seqText(page, key)) does not sort after the one before it\(Self.seqText(page, previous))"
                } else if let bound = pending.low, Self.precedes(page, key, bound, bound.indices) {
                    problem = "the key of entry \(index)\(Self.seqText(page, key)) sorts before its parent's range\(Self.seqText(bound, bound.indices, "from"))"
                } else if let bound = pending.high, !Self.precedes(page, key, bound, bound.indices) {
                    problem = "the key of entry \(index)\(Self.seqText(page, key)) sorts after its parent's range\(Self.seqText(bound, bound.indices, "below"))"
                }
                if let problem {
                    fail(number, .page, "page \(number) of \(tree): \(problem): a damaged key")
                    // A walk for salvage leaves out the one entry and keeps the rest of the page.
                    if stopAtFirst || !isLeafLevel { return nil }
                    continue
                }
            }
            previousKey = key
            if !isLeafLevel {
                keys.append(Array(page[key]))
                children.append(low | high << 16 | UInt64(nodeFlags) << 32)
                continue
            }
            let dataSize = Int(low | high << 16)
            let dataStart = keyStart + keySize
            if nodeFlags & DataFile.duplicates != 0 {
                fail(number, .page, "page \(number) of \(tree): entry \(index) is marked as holding duplicates, which no Herald database has")
                return nil
            }
            if nodeFlags & DataFile.bigData != 0 {
                guard dataStart + 8 <= pageSize else {
                    fail(number, .page, "page \(number) of \(tree): entry \(index)'s overflow page number runs past the page")
                    return nil
                }
                let overflow = page.loadLittleEndian(at: dataStart, as: UInt64.self)
                guard let value = readOverflow(overflow, size: dataSize, from: number, tree: tree) else { return nil }
                if visit != nil { values.append((Array(page[key]), value)) }
            } else {
                guard dataStart + dataSize <= pageSize else {
                    fail(number, .page, "page \(number) of \(tree): the value of entry \(index) runs past the end of the page")
                    return nil
                }
                if nodeFlags & DataFile.subDatabase != 0 {
                    let value = Array(page[dataStart..<dataStart + dataSize])
                    guard isMain, dataSize == 48 else {
                        fail(number, .page, "page \(number) of \(tree): entry \(index) is marked as a named database but is not one")
                        return nil
                    }
                    report.databases[String(decoding: page[key], as: UTF8.self)] = DataFile.Tree(value[...])
                } else if visit != nil {
                    values.append((Array(page[key]), Array(page[dataStart..<dataStart + dataSize])))
                }
            }
        }
        entries += isLeafLevel ? UInt64(count) : 0
        if let visit, let name {
            for (key, value) in values { visit(name, key, value) }
        }
        guard !isLeafLevel else { return [] }
        return children.indices.map { index in
            Pending(
                page: children[index], level: pending.level + 1,
                low: index == 0 ? pending.low : keys[index],
                high: index + 1 < keys.count ? keys[index + 1] : pending.high, parent: number)
        }
    }

    /// ` (seq N)` for an 8-byte key (Herald's seq keys), else nothing.
    static func seqText(_ bytes: [UInt8], _ key: Range<Int>, _ word: String = "seq") -> String {
        guard key.count == 8 else { return "" }
        return " (\(word) \(bytes[key].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))"
    }

    /// Whether `a[aRange]` sorts strictly before `b[bRange]` in byte order (memcmp, then
    /// length), without copying either.
    static func precedes(_ a: [UInt8], _ aRange: Range<Int>, _ b: [UInt8], _ bRange: Range<Int>) -> Bool {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                if aRange.count == 8 && bRange.count == 8 {
                    // Herald's seq keys: two big-endian loads compare as memcmp would, without
                    // the call (the walk compares every key of every page with the one before).
                    let x = UInt64(bigEndian: UnsafeRawPointer(a.baseAddress! + aRange.lowerBound).loadUnaligned(as: UInt64.self))
                    let y = UInt64(bigEndian: UnsafeRawPointer(b.baseAddress! + bRange.lowerBound).loadUnaligned(as: UInt64.self))
                    return x < y
                }
                let common = min(aRange.count, bRange.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress! + aRange.lowerBound, b.baseAddress! + bRange.lowerBound, common)
                return order < 0 || (order == 0 && aRange.count < bRange.count)
            }
        }
    }

    /// Checks (and, when visiting, reads) a value on overflow pages; `nil` when damaged.
    mutating func readOverflow(_ first: UInt64, size: Int, from parent: UInt64, tree: String) -> [UInt8]? {
        guard admit(first, from: parent, in: tree) else { return nil }
        guard let header = file.bytes(at: Int(first) * pageSize, count: DataFile.headerSize) else {
            fail(first, .truncated, "overflow page \(first) of \(tree) cannot be read")
            return nil
        }
        let flags = header.loadLittleEndian(at: 10, as: UInt16.self) & ~DataFile.transientFlags
        let pages = UInt64(header.loadLittleEndian(at: 12, as: UInt32.self))
        guard header.loadLittleEndian(at: 0, as: UInt64.self) == first, flags == DataFile.overflowFlag, pages >= 1 else {
            fail(first, .page, "page \(first) of \(tree) should begin a value on overflow pages but does not (flags 0x\(String(flags, radix: 16)))")
            return nil
        }
        guard size <= Int(pages) * pageSize - DataFile.headerSize else {
            fail(first, .page, "overflow page \(first) of \(tree) holds \(pages) pages, too few for its \(size)-byte value")
            return nil
        }
        for page in (first + 1)..<(first + pages) {
            guard admit(page, from: parent, in: tree) else { return nil }
        }
        report.pagesVisited += Int(pages)
        guard visit != nil else { return [] }
        guard let value = file.bytes(at: Int(first) * pageSize + DataFile.headerSize, count: size) else {
            fail(first, .truncated, "the value on overflow page \(first) of \(tree) cannot be read")
            return nil
        }
        return value
    }
}


extension DataFile {
    /// Reads every page of the file that looks like an intact leaf page (its own number in
    /// its header, the leaf flag, sane bounds) and calls `visit` with the key and value of
    /// each of its entries whose key is `keySize` bytes, values on overflow pages included
    /// when their first page is intact. For salvage, when the B-trees cannot be walked
    /// whole: it finds entries whatever tree they belonged to, and in pages no tree uses any
    /// more (freed, or written by a commit whose meta page was lost), so the caller must
    /// check each value (checksums) and choose.
    package func scanLeaves(
        pageSize: Int, keySize: Int, from firstPage: Int = 2, visit: (_ page: Int, _ key: [UInt8], _ value: [UInt8]) -> Void
    ) {
        let pages = size / pageSize
        guard pages > max(2, firstPage) else { return }
        for number in max(2, firstPage)..<pages {
            guard let page = bytes(at: number * pageSize, count: pageSize),
                page.loadLittleEndian(at: 0, as: UInt64.self) == UInt64(number),
                page.loadLittleEndian(at: 10, as: UInt16.self) & ~Self.transientFlags == Self.leafFlag
            else { continue }
            let lower = Int(page.loadLittleEndian(at: 12, as: UInt16.self))
            let upper = Int(page.loadLittleEndian(at: 14, as: UInt16.self))
            guard lower >= Self.headerSize, lower <= upper, upper <= pageSize else { continue }
            var found: [(key: [UInt8], value: [UInt8])] = []
            defer {
                // A key out of order with its neighbours on the page was damaged: leave it out.
                for (index, entry) in found.enumerated()
                where (index == 0 || found[index - 1].key.lexicographicallyPrecedes(entry.key))
                    && (index == found.count - 1 || entry.key.lexicographicallyPrecedes(found[index + 1].key))
                {
                    visit(number, entry.key, entry.value)
                }
            }
            for index in 0..<(lower - Self.headerSize) / 2 {
                let offset = Int(page.loadLittleEndian(at: Self.headerSize + 2 * index, as: UInt16.self))
                guard offset >= upper, offset + Self.nodeHeaderSize <= pageSize else { continue }
                let dataSize = Int(page.loadLittleEndian(at: offset, as: UInt16.self))
                    | Int(page.loadLittleEndian(at: offset + 2, as: UInt16.self)) << 16
                let flags = page.loadLittleEndian(at: offset + 4, as: UInt16.self)
                let keyStart = offset + Self.nodeHeaderSize
                guard Int(page.loadLittleEndian(at: offset + 6, as: UInt16.self)) == keySize,
                    keyStart + keySize <= pageSize, flags & (Self.subDatabase | Self.duplicates) == 0
                else { continue }
                let key = Array(page[keyStart..<keyStart + keySize])
                let dataStart = keyStart + keySize
                if flags & Self.bigData != 0 {
                    guard dataStart + 8 <= pageSize else { continue }
                    let first = Int(truncatingIfNeeded: page.loadLittleEndian(at: dataStart, as: UInt64.self))
                    guard first >= 2, first < pages,
                        let header = bytes(at: first * pageSize, count: Self.headerSize),
                        header.loadLittleEndian(at: 0, as: UInt64.self) == UInt64(first),
                        header.loadLittleEndian(at: 10, as: UInt16.self) & ~Self.transientFlags == Self.overflowFlag,
                        dataSize <= Int(header.loadLittleEndian(at: 12, as: UInt32.self)) * pageSize - Self.headerSize,
                        let value = bytes(at: first * pageSize + Self.headerSize, count: dataSize)
                    else { continue }
                    found.append((key, value))
                } else {
                    guard dataStart + dataSize <= pageSize else { continue }
                    found.append((key, Array(page[dataStart..<dataStart + dataSize])))
                }
            }
        }
    }
}

extension DataFile {
    /// The pages after `meta`'s last page that carry a B-tree or overflow page header with
    /// their own number: a commit wrote them, but no meta page records it. Either a crash
    /// interrupted that commit before its meta page was written (it was never acknowledged),
    /// or the meta page write was lost and the store reads as of an older commit. Pages past
    /// the last one a commit uses are otherwise never written (Herald's writer pads the file
    /// with zeros), so in an intact store there are none.
    package func pagesPastLastCommit(_ meta: Meta) -> [Int] {
        let pages = size / meta.pageSize
        let first = Int(min(meta.lastPage + 1, UInt64(pages)))
        guard first < pages else { return [] }
        var found: [Int] = []
        for number in first..<pages {
            guard let header = bytes(at: number * meta.pageSize, count: Self.headerSize),
                header.loadLittleEndian(at: 0, as: UInt64.self) == UInt64(number)
            else { continue }
            let flags = header.loadLittleEndian(at: 10, as: UInt16.self) & ~Self.transientFlags
            if flags == Self.branchFlag || flags == Self.leafFlag || flags == Self.overflowFlag { found.append(number) }
        }
        return found
    }
}
