import Foundation
import HeraldEvents
import HeraldProjection
import LMDB
import Testing
import HeraldTestSupport

@testable import HeraldStore

/// Damaged, incomplete and hostile store copies (issue 22): each must give an error naming
/// the file and the seq or page, never a crash, never a silently shorter or different answer.
/// A seeded handful of the cases `Tools/damage-test.sh` runs by the thousand.
@Suite("Damaged stores")
struct DamageTests {
    /// A closed store of `count` random events, compacted so that the data file holds no
    /// freed page (a page's records are then nowhere else in the file).
    func makeStore(_ dir: TemporaryDirectory, count: Int = 3_000, seed: UInt64 = 22) throws -> [Event] {
        let events = randomEvents(count: count, seed: seed)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events.map { ($0, .library) })
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        return events
    }

    /// A closed store of `count` random events, each appended in its own commit (so that the
    /// two meta pages hold consecutive commits of a grown file).
    func appendOneByOne(_ dir: TemporaryDirectory, count: Int, seed: UInt64) throws {
        let store = try Store(path: dir.path, options: fastOptions())
        for event in randomEvents(count: count, seed: seed) { try store.append(event) }
    }

    func readOnly() -> Store.Options {
        var options = fastOptions()
        options.readOnly = true
        return options
    }

    /// The data file's bytes, and a way to write them back.
    func edit(_ path: String, _ body: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        body(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The leaf pages holding log records, with the seqs on each, found by scanning the file.
    func logPages(_ path: String) throws -> [Int: [UInt64]] {
        let file = try #require(try DataFile(path: path))
        var pages: [Int: [UInt64]] = [:]
        file.scanLeaves(pageSize: 4096, keySize: 8) { page, key, value in
            let seq = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if value.withUnsafeBytes({ (try? LogRecord(seq: seq, bytes: $0)) != nil }) { pages[page, default: []].append(seq) }
        }
        return pages
    }

    func damage(of error: any Error) -> DataFileDamage? {
        guard let error = error as? StoreError, error.code == .lmdb else { return nil }
        return error.lmdbError?.damage
    }

    @Test("a data file cut short is refused before LMDB maps it, naming the file and its size")
    func truncated() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir)
        let file = dir.child("data.mdb")
        for size in [8_192 + 4_096 * 5, 8_192, 4_000] {
            try edit(file) { $0.removeSubrange(size...) }
            for options in [readOnly(), fastOptions()] {
                let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: options) }
                let found = try #require(error.flatMap(damage(of:)), "\(String(describing: error))")
                #expect(found.kind == .truncated && found.file == file)
                #expect("\(error!)".contains("cut short") && "\(error!)".contains("herald salvage"))
            }
        }
    }

    @Test("a zeroed B-tree page is found by the page walk and named, instead of an LMDB assertion")
    func zeroedPage() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir)
        let page = try #require(try logPages(dir.child("data.mdb")).keys.sorted().dropFirst(3).first)
        try edit(dir.child("data.mdb")) { bytes in
            bytes.replaceSubrange(page * 4096..<(page + 1) * 4096, with: repeatElement(0, count: 4096))
        }
        let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: readOnly()) }
        let found = try #require(error.flatMap(damage(of:)))
        #expect(found.kind == .page && found.page == page)
        // A writable open asked to check the pages refuses it too.
        var options = fastOptions()
        options.checksPages = true
        #expect(throws: (any Error).self) { try Store(path: dir.path, options: options) }
    }

    @Test("a bit flipped in a log key is found, whether the tree order shows it or only the seqs do")
    func flippedKey() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir)
        let pages = try logPages(dir.child("data.mdb"))
        let page = try #require(pages.keys.sorted().dropFirst(2).first)
        // The first key of a leaf page: flip the lowest bit, making it repeat or skip a seq.
        try edit(dir.child("data.mdb")) { bytes in
            let base = page * 4096
            let offset = Int(bytes[base + 16]) | Int(bytes[base + 17]) << 8
            bytes[base + offset + 8 + 7] ^= 1
        }
        let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: readOnly()) }
        #expect(error.flatMap(damage(of:))?.page == page, "\(String(describing: error))")

        // A key that sorts but leaves a hole: delete a record behind LMDB's back.
        let other = TemporaryDirectory()
        _ = try makeStore(other)
        do {
            let environment = try Environment(path: other.path)
            let log = try #require(try environment.openDatabase("log"))
            _ = try environment.write { txn in try txn.delete(log, key: SeqKey(1_234).bytes) }
        }
        #expect {
            try Store(path: other.path, options: readOnly())
        } throws: { error in
            guard let error = error as? StoreError, error.code == .brokenSequence else { return false }
            return error.seq == 1_234 && error.reason?.contains("seq 1234 is missing") == true
        }
        var noReplay = readOnly()
        noReplay.replayOnOpen = false
        let store = try Store(path: other.path, options: noReplay)
        var seen: [UInt64] = []
        #expect(throws: StoreError.self) { try store.history.forEach { seen.append($0.seq); return true } }
        #expect(seen == Array(1...1_233))
        #expect(try store.verify().problems.map(\.seq) == [1_234])
    }

    @Test("a meta page copied over the newer one (a lost last commit) is refused, not read as an older state")
    func staleMeta() throws {
        let dir = TemporaryDirectory()
        try appendOneByOne(dir, count: 200, seed: 5)
        let file = try #require(try DataFile(path: dir.child("data.mdb")))
        let header = file.header()
        let newest = try #require(header.newest), previous = try #require(header.previous)
        try edit(dir.child("data.mdb")) { bytes in
            let old = Array(bytes[previous.index * 4096..<(previous.index + 1) * 4096])
            bytes.replaceSubrange(newest.index * 4096..<(newest.index + 1) * 4096, with: old)
        }
        let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: readOnly()) }
        #expect(error.flatMap(damage(of:))?.kind == .meta)
    }

    @Test("what LMDB would act on in a damaged meta page (database flags, a last page below the previous commit's) or a named database's record (its flags) is refused by every open, not left for LMDB to abort on or write over")
    func damagedDatabaseFlags() throws {
        // The free list's sorted-duplicates bit (found by damage-test seed 53: LMDB aborted
        // the next write, `Assertion 'mx != NULL' failed in mdb_cursor_init()`), then the
        // main database's integer-key bit, in the newest meta page.
        for (offset, bit) in [(44, UInt8(0x04)), (92, UInt8(0x08))] {
            let dir = TemporaryDirectory()
            _ = try makeStore(dir, count: 200)
            let file = try #require(try DataFile(path: dir.child("data.mdb")))
            let newest = try #require(file.header().newest)
            try edit(dir.child("data.mdb")) { $0[newest.index * 4096 + offset] ^= bit }
            for options in [fastOptions(), readOnly()] {
                let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: options) }
                #expect(error.flatMap(damage(of:))?.kind == .meta, "\(String(describing: error))")
            }
            let salvaged = try StoreMaintenance(path: dir.path, options: fastOptions()).salvage(to: TemporaryDirectory().child("salvaged"))
            #expect(salvaged.lostSeqs.isEmpty && salvaged.recordsCopied == 200, "\(salvaged)")
        }
        // The newest meta page's last page lowered below the previous commit's (a write would
        // allocate pages the trees still use).
        do {
            let dir = TemporaryDirectory()
            try appendOneByOne(dir, count: 300, seed: 9)
            let file = try #require(try DataFile(path: dir.child("data.mdb")))
            let newest = try #require(file.header().newest), previous = try #require(file.header().previous)
            #expect(newest.lastPage > 2 && previous.lastPage > 2)
            try edit(dir.child("data.mdb")) { bytes in
                let lowered = previous.lastPage - 1
                for i in 0..<8 { bytes[newest.index * 4096 + 136 + i] = UInt8(truncatingIfNeeded: lowered >> (8 * UInt64(i))) }
            }
            for options in [fastOptions(), readOnly()] {
                let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: options) }
                #expect("\(String(describing: error))".contains("commits never give pages back"), "\(String(describing: error))")
            }
        }
        // The `log` database's sorted-duplicates bit, in its record in the main database (a
        // writable open does not walk the pages, so the record is checked as it is opened).
        let dir = TemporaryDirectory()
        _ = try makeStore(dir, count: 200)
        var flipped = 0
        try edit(dir.child("data.mdb")) { bytes in
            // Node header (data size 48, F_SUBDATA, key size 3), the key, then the MDB_db
            // record, whose flags are its bytes 4 and 5.
            let node: [UInt8] = [48, 0, 0, 0, 2, 0, 3, 0] + Array("log".utf8)
            var index = 0
            while index + node.count + 6 <= bytes.count {
                if bytes[index] == node[0] && Array(bytes[index..<index + node.count]) == node {
                    bytes[index + node.count + 4] ^= 0x04
                    flipped += 1
                }
                index += 1
            }
        }
        #expect(flipped >= 1)
        for options in [fastOptions(), readOnly()] {
            let error = #expect(throws: (any Error).self) { try Store(path: dir.path, options: options) }
            #expect("\(String(describing: error))".contains("database `log` records flags 0x4") || error.flatMap(damage(of:)) != nil,
                "\(String(describing: error))")
        }
    }

    @Test("a lost last commit (its meta page never written) is noted by verify and recovered by salvage")
    func lostLastCommit() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 12)
        let file = dir.child("data.mdb")
        // Every meta page as each commit left it, by txnid.
        var metaPages: [UInt64: (index: Int, bytes: [UInt8])] = [:]
        func recordMetaPages() throws {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            let header = try #require(try DataFile(path: file)).header()
            for case .success(let meta) in header.metas {
                metaPages[meta.transactionId] = (meta.index, Array(bytes[meta.index * 4096..<(meta.index + 1) * 4096]))
            }
        }
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            for start in stride(from: 0, to: 400, by: 50) {
                try store.append(contentsOf: events[start..<start + 50].map { ($0, .library) })
                try recordMetaPages()
            }
        }
        // The last commit's meta page write never reached the disk: its page still holds the
        // commit before the previous one.
        let last = try #require(try DataFile(path: file)?.header().newest)
        let stale = try #require(metaPages[last.transactionId - 2])
        #expect(stale.index == last.index)
        try edit(file) { $0.replaceSubrange(stale.index * 4096..<(stale.index + 1) * 4096, with: stale.bytes) }
        var noReplay = readOnly()
        noReplay.replayOnOpen = false
        let report = try Store(path: dir.path, options: noReplay).verify()
        #expect(report.highWater == 350 && report.isClean)
        #expect(report.notes.count == 1 && report.notes[0].contains("written after the newest commit"), "\(report.notes)")
        let destination = TemporaryDirectory()
        let salvaged = try StoreMaintenance(path: dir.path, options: fastOptions()).salvage(to: destination.child("new"))
        #expect(salvaged.recordsCopied == 400 && salvaged.lostSeqs.isEmpty)
        #expect(try Store(path: destination.child("new"), options: readOnly()).projection == referenceProjection(events))
    }

    @Test("a missing archive is an error for whole-history reads; state from a snapshot still opens")
    func missingArchive() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 2_000, seed: 9)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events[..<1_500].map { ($0, .library) })
            try store.snapshot()
            try store.append(contentsOf: events[1_500...].map { ($0, .library) })
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        try FileManager.default.removeItem(atPath: dir.child("archive"))
        let store = try Store(path: dir.path, options: readOnly())
        #expect(store.projection == referenceProjection(events))
        #expect {
            try store.history.forEach { _ in true }
        } throws: { error in
            guard let error = error as? StoreError, error.code == .missingArchive else { return false }
            return error.seq == 1_500
        }
        #expect(throws: StoreError.self) { try store.replay() }
        var noSnapshots = readOnly()
        noSnapshots.useSnapshots = false
        #expect(throws: StoreError.self) { try Store(path: dir.path, options: noSnapshots) }
        // Nor may a writable open start over it.
        #expect(throws: StoreError.self) {
            try FileManager.default.removeItem(atPath: dir.child("data.mdb"))
            try FileManager.default.createDirectory(atPath: dir.child("archive"), withIntermediateDirectories: false)
            _ = try Store(path: dir.path, options: fastOptions())
        }
    }

    @Test("a writable open refuses a directory whose LMDB files are gone but herald.lock is left, rather than starting a new log at seq 1")
    func lostDataFiles() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir, count: 100)
        try FileManager.default.removeItem(atPath: dir.child("data.mdb"))
        try? FileManager.default.removeItem(atPath: dir.child("lock.mdb"))  // when the environment keeps one
        #expect(FileManager.default.fileExists(atPath: dir.child("herald.lock")))
        #expect {
            try Store(path: dir.path, options: fastOptions())
        } throws: { error in
            guard let error = error as? StoreError, error.code == .remnants else { return false }
            return error.reason?.contains("herald.lock is there") == true
        }
        #expect(!FileManager.default.fileExists(atPath: dir.child("data.mdb")))
        #expect(throws: StoreError.self) { try Store(path: dir.path, options: readOnly()) }
        // A directory that never held a store still becomes one.
        let fresh = TemporaryDirectory()
        #expect(try Store(path: fresh.child("new"), options: fastOptions()).lastSeq == 0)
    }

    @Test("a writable open refuses an empty data file rather than starting a new log at seq 1")
    func emptyDataFile() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir, count: 100)
        try edit(dir.child("data.mdb")) { $0 = [] }
        #expect {
            try Store(path: dir.path, options: fastOptions())
        } throws: { error in
            guard let error = error as? StoreError, error.code == .remnants else { return false }
            return error.reason?.contains("data.mdb is empty") == true
        }
        #expect(throws: (any Error).self) { try Store(path: dir.path, options: readOnly()) }
        #expect(FileManager.default.contents(atPath: dir.child("data.mdb"))?.isEmpty == true)
    }

    @Test("an archive left by an interrupted first compact --archive is named by verify and removed by a writable open")
    func interruptedArchive() throws {
        let dir = TemporaryDirectory()
        let events = try makeStore(dir, count: 300)
        // What a compaction killed right after creating the archive's environment leaves.
        try FileManager.default.createDirectory(atPath: dir.child("archive"), withIntermediateDirectories: false)
        do { _ = try Environment(path: dir.child("archive")) }
        var noReplay = readOnly()
        noReplay.replayOnOpen = false
        let report = try Store(path: dir.path, options: noReplay).verify()
        #expect(report.problems.count == 1 && report.problems[0].message.contains("interrupted `compact --archive`"))
        #expect(try Store(path: dir.path, options: readOnly()).projection == referenceProjection(events))
        _ = try Store(path: dir.path, options: fastOptions())
        #expect(!FileManager.default.fileExists(atPath: dir.child("archive")))
        #expect(try Store(path: dir.path, options: noReplay).verify().isClean)
    }

    @Test("salvage copies every record that checks out and names exactly the seqs lost with a zeroed page")
    func salvage() throws {
        let dir = TemporaryDirectory()
        let events = try makeStore(dir)
        let pages = try logPages(dir.child("data.mdb"))
        let page = try #require(pages.keys.sorted().dropFirst(4).first)
        let lost = try #require(pages[page]).sorted()
        try edit(dir.child("data.mdb")) { bytes in
            bytes.replaceSubrange(page * 4096..<(page + 1) * 4096, with: repeatElement(0, count: 4096))
        }
        let destination = TemporaryDirectory()
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).salvage(to: destination.child("new"))
        #expect(report.lostSeqs == [lost.first!...lost.last!])
        #expect(report.recordsCopied == events.count - lost.count)
        #expect(!report.damage.isEmpty)
        let salvaged = try Store(path: destination.child("new"), options: readOnly())
        #expect(try salvaged.history.bounds().recordCountInLog == events.count - lost.count)
        var noReplay = readOnly()
        noReplay.replayOnOpen = false
        #expect(try Store(path: destination.child("new"), options: noReplay).verify().isClean)
        // The survivors are exactly the original records.
        let original = events.enumerated().filter { !lost.contains(UInt64($0.offset + 1)) }.map(\.element)
        #expect(try salvaged.history.records().map(\.event) == original)
    }

    @Test("the open-time page walk costs little: a 20,000-event store's data file is walked in well under a second")
    func walkIsCheap() throws {
        let dir = TemporaryDirectory()
        _ = try makeStore(dir, count: 20_000, seed: 3)
        let file = try #require(try DataFile(path: dir.child("data.mdb")))
        let meta = try #require(file.header().newest)
        let clock = ContinuousClock()
        var report: DataFile.WalkReport?
        let elapsed = clock.measure { report = file.walk(meta, stopAtFirst: true) }
        let walked = try #require(report)
        #expect(walked.damage.isEmpty)
        #expect(walked.pagesVisited > 100)
        #expect(elapsed < .seconds(1), "\(elapsed)")
    }
}
