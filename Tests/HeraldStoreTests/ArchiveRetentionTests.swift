import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Archive retention: expired archived ranges exported to gzip JSONL, then removed.
@Suite("Archive retention")
struct ArchiveRetentionTests {
    /// A store of `events`, one recorded each second from t = 1000 s, compacted into the
    /// archive through `compactThrough`; returns the export lines of every record.
    func makeArchivedStore(_ dir: TemporaryDirectory, events: [Event], compactThrough: Int) throws -> [String] {
        let options = fastOptionsRecordingEachSecond()
        do {
            let store = try Store(path: dir.path, options: options)
            for event in events[..<compactThrough] { try store.append(event) }
            try store.snapshot()
            for event in events[compactThrough...] { try store.append(event) }
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        let store = try Store(path: dir.path, options: fastOptions())
        var lines: [String] = []
        try store.history.forEach { record in
            var writer = JSONWriter()
            record.writeExportLine(to: &writer)
            lines.append(writer.string)
            return true
        }
        return lines
    }

    func exportLines(_ path: String) throws -> [String] {
        String(decoding: try GzipFileWriter.contents(of: path), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test("a size limit exports the oldest archived records, byte for byte as herald export writes them, then removes them")
    func sizeLimit() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 1_200, seed: 7)
        let lines = try makeArchivedStore(dir, events: events, compactThrough: 1_000)
        let reference = referenceProjection(events)
        let exports = dir.path + "/exports"
        let plan = try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(
            retention: ArchiveRetention(maxBytes: 20_000, exportDirectory: exports), dryRun: true)
        #expect(plan.dryRun && plan.origin > 0 && plan.archiveBytesAfter <= 20_000)
        #expect(!FileManager.default.fileExists(atPath: exports))

        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(
            retention: ArchiveRetention(maxBytes: 20_000, exportDirectory: exports))
        #expect(report.origin == plan.origin && report.recordsExpired == Int(report.origin))
        #expect(report.archiveBytesAfter <= 20_000 && report.archiveBytesAfter > 20_000 - 2_000)
        let file = try #require(report.exportFile)
        #expect(file == exports + "/" + ArchiveRetention.exportName(first: 1, last: report.origin))
        #expect(try exportLines(file) == Array(lines[..<Int(report.origin)]))

        let store = try Store(path: dir.path, options: fastOptions())
        #expect(store.projection.snapshot() == reference.snapshot())
        var kept: [UInt64] = []
        try store.history.forEach { kept.append($0.seq); return true }
        #expect(kept == Array((report.origin + 1)...1_200))
        #expect(try store.archive()!.recordCount() == 1_000 - Int(report.origin))
        let verified = try store.verify()
        #expect(verified.isClean, "\(verified.problems)")
        #expect(verified.notes.contains { $0.contains(ArchiveRetention.exportName(first: 1, last: report.origin)) })
        #expect(try store.exportedRanges().map(\.last) == [report.origin])
        // Points before the new origin name the export; the origin itself and later rebuild.
        #expect(try store.projection(at: report.origin, useSnapshots: false) == referenceProjection(Array(events[..<Int(report.origin)])))
        do {
            _ = try store.projection(at: report.origin - 1, useSnapshots: false)
            Issue.record("a point before the origin was rebuilt")
        } catch let error as StoreError {
            guard error.code == .historyExported, let origin = error.seq, let files = error.files else { throw error }
            #expect(origin == report.origin && files == [file])
        }
    }

    @Test("an age limit expires what was recorded before the cutoff; a second pass exports the next range only")
    func ageLimitTwice() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 8)
        let lines = try makeArchivedStore(dir, events: events, compactThrough: 300)
        let exports = dir.path + "/exports"
        // Record n was recorded at 1000 + n seconds: at 1000 + 500 s, one 400 s old or more is n ≤ 100.
        let retention = ArchiveRetention(maxAgeSeconds: 400, exportDirectory: exports)
        let first = try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(retention: retention, now: 1_500_000)
        #expect(first.expiredRange == 1...99)
        let second = try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(retention: retention, now: 1_650_000)
        #expect(second.expiredRange == 100...249)
        // Nothing of the log expires, whatever the age: only the archive (through the base, 300).
        let third = try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(retention: retention, now: 9_000_000)
        #expect(third.expiredRange == 250...300 && third.archiveBytesAfter == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: exports).sorted()
        #expect(files.count == 3)
        let exported = try files.flatMap { try exportLines(exports + "/" + $0) }
        #expect(exported == Array(lines[..<300]))
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try store.verify().isClean)
        #expect(store.projection == referenceProjection(events))
    }

    @Test("a crash after the export leaves the store as it was; a crash after the commit leaves leftovers the next run removes")
    func crashSafety() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 500, seed: 9)
        let lines = try makeArchivedStore(dir, events: events, compactThrough: 400)
        let exports = dir.path + "/exports"
        struct Crash: Error {}

        // Stopped once the export is durable: the file is whole, the store untouched.
        var options = fastOptions()
        options.retentionFault = { if $0 == .exported { throw Crash() } }
        let retention = ArchiveRetention(maxBytes: 10_000, exportDirectory: exports)
        #expect(throws: Crash.self) { try StoreMaintenance(path: dir.path, options: options).expireArchive(retention: retention) }
        let files = try FileManager.default.contentsOfDirectory(atPath: exports)
        #expect(files.count == 1 && !files[0].hasPrefix("."))
        let crashedLast = Int(files[0].dropFirst("herald-archive-00000000000000000001-".count).prefix(20))!
        #expect(try exportLines(exports + "/" + files[0]) == Array(lines[..<crashedLast]))
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            #expect(try store.history.facts().origin == 0 && (try store.archive()!.recordCount()) == 400)
            #expect(try store.verify().isClean)
        }

        // A different limit next time: the unrecorded export is replaced, not left to overlap.
        options.retentionFault = { if $0 == .committed { throw Crash() } }
        let tighter = ArchiveRetention(maxBytes: 5_000, exportDirectory: exports)
        #expect(throws: Crash.self) { try StoreMaintenance(path: dir.path, options: options).expireArchive(retention: tighter) }
        let after = try FileManager.default.contentsOfDirectory(atPath: exports)
        #expect(after.count == 1 && after[0] != files[0])
        let origin: UInt64
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            origin = try store.history.facts().origin
            #expect(origin > UInt64(crashedLast))
            #expect(try exportLines(exports + "/" + after[0]) == Array(lines[..<Int(origin)]))
            // Leftovers at or below the origin are outside the history: verify and reads pass.
            #expect(try store.archive()!.recordCount() == 400)
            #expect(try store.verify().isClean)
            #expect(store.projection == referenceProjection(events))
            var kept: [UInt64] = []
            try store.history.forEach { kept.append($0.seq); return true }
            #expect(kept == Array((origin + 1)...500))
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).expireArchive(retention: tighter)
        #expect(try Store(path: dir.path, options: fastOptions()).archive()!.recordCount() == 400 - Int(origin))
    }

    @Test("the exports database records a directory that resolves from the store; entries from before 0.5 read as written")
    func recordedExportDirectory() throws {
        let inside = Store.recordedExportDirectory("/data/s/./archive-exports/", store: "/data/s")
        #expect(inside.path == "archive-exports" && inside.relativeToStore)
        let itself = Store.recordedExportDirectory("/data/s", store: "/data/s/")
        #expect(itself.path == "." && itself.relativeToStore)
        let beside = Store.recordedExportDirectory("/data/s/../out", store: "/data/s")
        #expect(beside.path == "/data/out" && !beside.relativeToStore)
        let sibling = Store.recordedExportDirectory("/data/s2", store: "/data/s")
        #expect(sibling.path == "/data/s2" && !sibling.relativeToStore)
        let relative = Store.recordedExportDirectory("exports", store: "/data/s")
        #expect(relative.path.hasPrefix("/") && relative.path.hasSuffix("/exports") && !relative.relativeToStore)

        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        let entries = [
            #"{"first":1,"last":5,"file":"a.gz","directory":"old/relative","records":5,"exportedAt":0}"#,
            #"{"first":6,"last":9,"file":"b.gz","directory":"archive-exports","relativeToStore":true,"records":4,"exportedAt":0}"#,
            #"{"first":10,"last":12,"file":"c.gz","directory":"/elsewhere","records":3,"exportedAt":0}"#,
        ]
        let exports = try store.auxiliary(.exports)
        try store.environment.storeWrite { txn in
            for (entry, first) in zip(entries, [1, 6, 10] as [UInt64]) {
                try txn.put(exports, key: SeqKey(first).bytes, value: Array(entry.utf8))
            }
        }
        #expect(try store.exportedRanges().map(\.directory) == ["old/relative", dir.path + "/archive-exports", "/elsewhere"])
    }
}
