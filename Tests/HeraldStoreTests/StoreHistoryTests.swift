import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// `Store.history`: one reader of the whole readable history (archive, then log) and one
/// value for its bounds, over stores compacted with and without an archive and purged.
@Suite("Store history: records and bounds")
struct StoreHistoryTests {
    func notify(_ account: String, _ id: Int64) -> Event {
        Event(account: account, .notify(.init(chat: "c", kind: .message, id: id, date: 1_700_000_000 + id, title: "t\(id)")))
    }

    /// Appends events `range` (account "a" for odd ids, "b" for even ones) to the store at
    /// `path`, with a snapshot after when asked; returns the events.
    @discardableResult
    func append(_ range: ClosedRange<Int64>, to path: String, snapshot: Bool = false) throws -> [Event] {
        let store = try Store(path: path, options: fastOptions())
        let events = range.map { notify($0 % 2 == 1 ? "a" : "b", $0) }
        try store.append(contentsOf: events.map { ($0, .library) })
        if snapshot { try store.snapshot() }
        return events
    }

    /// A store of seqs 1...40 whose records 1...20 compaction moved to the archive.
    func archivedStore(_ dir: TemporaryDirectory) throws -> (Store, [Event]) {
        var events = try append(1...20, to: dir.path, snapshot: true)
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        #expect(report.base == 20 && report.recordsArchived == 20)
        events += try append(21...40, to: dir.path)
        return (try Store(path: dir.path, options: fastOptions()), events)
    }

    @Test("a range across the archive and the log reads both, in order")
    func rangeAcrossArchive() throws {
        let dir = TemporaryDirectory()
        let (store, events) = try archivedStore(dir)
        #expect(try store.history.records().map(\.event) == events)
        #expect(try store.history.records(from: 15, through: 25).map(\.seq) == Array(15...25))
        #expect(try store.history.records(from: 20, through: 21).map(\.seq) == [20, 21])
        #expect(try store.history.records(from: 41).isEmpty)
        #expect(try store.history.records(account: "b", limit: 12).map(\.seq) == Array(stride(from: 2, through: 24, by: 2)))
        // The log alone starts after the compaction base.
        #expect(try store.history.logRecords().map(\.seq) == Array(21...40))
    }

    @Test("paging with a limit crosses the archive/log boundary without losing or repeating a record")
    func pagingAcrossArchive() throws {
        let dir = TemporaryDirectory()
        let (store, _) = try archivedStore(dir)
        var pages: [[UInt64]] = []
        var from: UInt64 = 1
        while case let page = try store.history.records(from: from, limit: 7), let last = page.last {
            pages.append(page.map(\.seq))
            from = last.seq + 1
        }
        #expect(pages.allSatisfy { $0.count <= 7 })
        #expect(pages.flatMap { $0 } == Array(1...40))
        #expect(pages.contains { $0.contains(20) && $0.contains(21) }, "one page spans the boundary: \(pages)")
    }

    @Test("forEach stops when the body returns false, in the archive and in the log")
    func earlyStop() throws {
        let dir = TemporaryDirectory()
        let (store, _) = try archivedStore(dir)
        for start: UInt64 in [3, 18, 30] {
            var seen: [UInt64] = []
            try store.history.forEach(from: start) { record in
                seen.append(record.seq)
                return seen.count < 5
            }
            #expect(seen == Array(start..<(start + 5)))
        }
        var accountSeen: [UInt64] = []
        try store.history.forEach(from: 17, account: "a") { record in
            accountSeen.append(record.seq)
            return accountSeen.count < 3
        }
        #expect(accountSeen == [17, 19, 21])
    }

    @Test("async records equal the sync ones")
    func asyncEqualsSync() async throws {
        let dir = TemporaryDirectory()
        let (store, _) = try archivedStore(dir)
        for (from, through, limit) in [(UInt64(1), UInt64.max, Int?.none), (15, 25, nil), (18, .max, 4), (35, 38, 10)] {
            let suspended = try await store.history.records(from: from, through: through, limit: limit)
            let blocking: [LogRecord] = try { try store.history.records(from: from, through: through, limit: limit) }()
            #expect(suspended == blocking)
            #expect(!suspended.isEmpty)
        }
        let accountOnly = try await store.history.records(account: "a")
        #expect(accountOnly.map(\.seq) == Array(stride(from: 1, through: 39, by: 2)))
    }

    @Test("after compaction with an archive, bounds say where the log starts and that the history is whole")
    func boundsAfterCompaction() throws {
        let dir = TemporaryDirectory()
        let (store, _) = try archivedStore(dir)
        let bounds = try store.history.bounds()
        #expect(bounds.firstSeqInLog == 21 && bounds.lastSeqInLog == 40 && bounds.recordCountInLog == 20)
        #expect(bounds.highWaterSeq == 40 && bounds.droppedThrough == nil && bounds.firstReadableSeq == 1)
        #expect(bounds.hasArchive && bounds.purgedRanges.isEmpty)
        #expect(try store.history.missingArchiveThrough() == nil)
    }

    @Test("a compaction that empties the log keeps the high-water seq and the archive's records")
    func boundsAfterWholeLogCompacted() throws {
        let dir = TemporaryDirectory()
        try append(1...10, to: dir.path, snapshot: true)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        let store = try Store(path: dir.path, options: fastOptions())
        let bounds = try store.history.bounds()
        #expect(bounds.firstSeqInLog == nil && bounds.lastSeqInLog == 0 && bounds.recordCountInLog == 0)
        #expect(bounds.highWaterSeq == 10 && bounds.hasArchive && bounds.droppedThrough == nil)
        #expect(try store.history.records().map(\.seq) == Array(1...10))
        #expect(try store.append(notify("a", 11)).seq == 11)
    }

    @Test("compacted without an archive: a read from below the origin starts after it, as the log alone does")
    func compactedWithoutArchive() throws {
        let dir = TemporaryDirectory()
        try append(1...20, to: dir.path, snapshot: true)
        try append(21...30, to: dir.path)
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        #expect(report.base == 20 && report.historyDiscarded)
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try store.history.records().map(\.seq) == Array(21...30))
        #expect(try store.history.records(from: 5, limit: 3).map(\.seq) == [21, 22, 23])
        #expect(try store.history.records(through: 20).isEmpty)
        #expect(try store.history.records() == store.history.logRecords())
        let bounds = try store.history.bounds()
        #expect(bounds.droppedThrough == 20 && bounds.firstReadableSeq == 21 && !bounds.hasArchive)
        #expect(bounds.firstSeqInLog == 21 && bounds.lastSeqInLog == 30 && bounds.highWaterSeq == 30)
    }

    @Test("purged seqs are gaps the reader skips, in the archive and in the log")
    func purgedGaps() throws {
        let dir = TemporaryDirectory()
        try append(1...20, to: dir.path, snapshot: true)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        try append(21...30, to: dir.path)
        _ = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: "b")
        let store = try Store(path: dir.path, options: fastOptions())
        let odd = Array(stride(from: UInt64(1), through: 29, by: 2))
        #expect(try store.history.records().map(\.seq) == odd)
        #expect(try store.history.records(from: 16, limit: 4).map(\.seq) == [17, 19, 21, 23])
        let purged = try store.history.bounds().purgedRanges
        #expect(purged.flatMap { Array($0) } == Array(stride(from: UInt64(2), through: 30, by: 2)), "\(purged)")
        #expect(try store.history.bounds().highWaterSeq == 30)
    }

    @Test("purging the last records leaves the high-water seq above the last record")
    func purgeOfLastRecords() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: [notify("a", 1), notify("a", 2), notify("b", 3), notify("b", 4)].map { ($0, .library) })
        }
        _ = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: "b")
        let store = try Store(path: dir.path, options: fastOptions())
        let bounds = try store.history.bounds()
        #expect(bounds.lastSeqInLog == 2 && bounds.highWaterSeq == 4 && bounds.purgedRanges == [3...4])
        #expect(bounds.recordCountInLog == 2 && bounds.firstSeqInLog == 1)
        #expect(store.lastSeq == 4)
        #expect(try store.append(notify("a", 5)).seq == 5)
    }

    @Test("an empty store has empty bounds and no records")
    func emptyStore() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        let bounds = try store.history.bounds()
        #expect(bounds.firstSeqInLog == nil && bounds.lastSeqInLog == 0 && bounds.recordCountInLog == 0)
        #expect(bounds.highWaterSeq == 0 && bounds.droppedThrough == nil && bounds.firstReadableSeq == 1)
        #expect(bounds.purgedRanges.isEmpty && !bounds.hasArchive)
        #expect(try await store.history.records().isEmpty)
        #expect(try store.history.lastSeq(recordedAtOrBefore: .max) == nil)
    }
}
