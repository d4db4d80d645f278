import Foundation
import HeraldEvents
import HeraldProjection
import Synchronization
import Testing
import HeraldTestSupport
import LMDB

@testable import HeraldStore

@Suite("Backup")
struct BackupTests {
    /// A store whose first 2,000 events were compacted into the archive, with a key and a
    /// quarantine entry; returns its path.
    func makeArchivedStore(_ dir: TemporaryDirectory, events: [Event]) throws -> String {
        let path = dir.child("store")
        do {
            let store = try Store(path: path, options: fastOptions())
            try store.append(contentsOf: events[..<2_000].map { ($0, .library) })
            try store.snapshot()
        }
        _ = try StoreMaintenance(path: path, options: fastOptions()).compact(discardingHistory: false)
        return path
    }

    /// A store of `events` random events, closed; returns its path.
    func makeStore(_ dir: TemporaryDirectory, events: Int) throws -> String {
        let path = dir.child("store")
        let store = try Store(path: path, options: fastOptions())
        try store.append(contentsOf: randomEvents(count: events, seed: 5).map { ($0, .library) })
        return path
    }

    /// Every record of the whole history (archive, then log) through `through`.
    func history(_ store: Store, through: UInt64) throws -> [LogRecord] {
        var records: [LogRecord] = []
        try store.history.forEach(through: through) { records.append($0); return true }
        return records
    }

    @Test("a backup taken while another thread appends holds exactly the source at its last seq")
    func backupUnderConcurrentAppends() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 8_000, seed: 36)
        let path = try makeArchivedStore(dir, events: events)
        let writer = try Store(path: path, options: fastOptions())
        try writer.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: Array(repeating: 9, count: 256)))
        try writer.quarantine.add([QuarantinedPayload(receivedAt: 1, format: "webpush", input: "-", line: 0, reason: "test", raw: [1, 2, 3])])
        // Retention's exports are plain files beside the environments; a partial one is not.
        try FileManager.default.createDirectory(atPath: path + "/archive-exports", withIntermediateDirectories: true)
        try Data("export".utf8).write(to: URL(fileURLWithPath: path + "/archive-exports/herald-archive-x.jsonl.gz"))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: path + "/archive-exports/.herald-archive-9.partial"))

        let done = Atomic(false)
        let appender = Thread {
            var next = 2_000
            while next < events.count && !done.load(ordering: .relaxed) {
                let end = min(next + 20, events.count)
                try! writer.append(contentsOf: events[next..<end].map { ($0, .library) })
                next = end
            }
        }
        appender.start()
        while writer.lastSeq < 2_200 { usleep(1_000) }
        let report = try StoreMaintenance(path: path).backup(to: dir.child("backup"))
        let appendedDuring = writer.lastSeq
        done.store(true, ordering: .relaxed)
        while !appender.isFinished { usleep(1_000) }

        #expect(report.verify.isClean)
        #expect(report.environments == ["archive", "."])
        #expect(report.files == ["archive-exports/herald-archive-x.jsonl.gz"])
        #expect(report.firstSeq == 1 && report.lastSeq >= 2_200 && report.lastSeq <= appendedDuring)
        #expect(report.verify.archivedRecordsChecked == 2_000)
        #expect(report.bytes > 0 && report.attempts == 1)

        // Only the store's data (before anything opens the copy): no lock files, no partial export, every file 0600.
        let files = filesUnder(dir.child("backup")).map { String($0.dropFirst(dir.child("backup/").count)) }.sorted()
        #expect(files == ["archive-exports/herald-archive-x.jsonl.gz", "archive/data.mdb", "data.mdb"])
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: dir.child("backup/") + file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        var options = Store.Options()
        options.readOnly = true
        let copy = try Store(path: dir.child("backup"), options: options)
        let last = report.lastSeq
        #expect(copy.lastSeq == last)
        #expect(try copy.history.bounds().hasArchive)
        #expect(try history(copy, through: .max) == history(writer, through: last))
        #expect(copy.projection == (try writer.projection(at: last)))
        #expect(copy.projection == referenceProjection(events[..<Int(last)]))
        #expect(try copy.keyring.all() == writer.keyring.all())
        #expect(try copy.quarantine.all() == writer.quarantine.all())

        // Restored, it is a store that goes on where the backup stopped.
        let restored = try Store(path: dir.child("backup"), options: fastOptions())
        #expect(try restored.append(events[0]).seq == last + 1)
        #expect(try restored.verify().isClean)
    }

    @Test("a destination that is not empty is refused, untouched; an empty directory is used")
    func refusesNonEmptyDestination() throws {
        let dir = TemporaryDirectory()
        let path = try makeStore(dir, events: 50)
        let taken = dir.child("taken")
        try FileManager.default.createDirectory(atPath: taken, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: taken + "/notes.txt"))
        #expect {
            try StoreMaintenance(path: path).backup(to: taken)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .backupRefused, let destination = error.path, let reason = error.reason else { return false }
            return destination == taken && reason.contains("not empty")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: taken) == ["notes.txt"])
        #expect(throws: StoreError.self) { try StoreMaintenance(path: path).backup(to: taken + "/notes.txt") }
        #expect(throws: StoreError.self) { try StoreMaintenance(path: dir.child("missing")).backup(to: dir.child("b")) }
        #expect(throws: StoreError.self) { try StoreMaintenance(path: path).backup(to: path + "/inside") }
        #expect(!FileManager.default.fileExists(atPath: path + "/inside"))
        // Nothing left beside them: the temporary sibling goes with a refused backup.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["store", "taken"])

        let empty = dir.child("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let report = try StoreMaintenance(path: path).backup(to: empty)
        #expect(report.lastSeq == 50 && report.environments == ["."])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["empty", "store", "taken"])
    }

    @Test("other environments in the store directory (serve/) are copied too")
    func copiesOtherEnvironments() throws {
        let dir = TemporaryDirectory()
        let path = try makeStore(dir, events: 10)
        // A stand-in for `herald serve`'s tables: any directory with an LMDB environment.
        try FileManager.default.createDirectory(atPath: path + "/serve", withIntermediateDirectories: true)
        let tables = try Environment(path: path + "/serve")
        let table = try #require(try tables.openDatabase("tokens", create: true))
        try tables.write { txn in try txn.put(table, key: Array("k".utf8), value: Array("v".utf8)) }
        let report = try StoreMaintenance(path: path).backup(to: dir.child("backup"))
        #expect(report.environments == ["serve", "."])
        let copied = try Environment(path: dir.child("backup/serve"))
        let copiedTable = try #require(try copied.openDatabase("tokens"))
        #expect(try copied.read { txn in try txn.get(copiedTable, key: Array("k".utf8)) } == Array("v".utf8))
    }

    @Test("a compaction between the archive's copy and the log's is seen; the pair is copied again and agrees")
    func compactionDuringBackupIsRetried() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 3_000, seed: 37)
        let path = try makeArchivedStore(dir, events: events)
        do {
            let store = try Store(path: path, options: fastOptions())
            try store.append(contentsOf: events[2_000...].map { ($0, .library) })
            try store.snapshot()
        }
        var compacted = false
        let report = try StoreMaintenance(path: path).backup(to: dir.child("backup")) { attempt in
            guard attempt == 1 else { return }
            // Moves seqs 2,001…3,000 into the archive after the archive was copied: a log
            // copied now would say the archive holds them, and the archive copy would not.
            _ = try StoreMaintenance(path: path, options: fastOptions()).compact(discardingHistory: false)
            compacted = true
        }
        #expect(compacted && report.attempts == 2)
        #expect(report.verify.isClean)
        #expect(report.verify.archivedRecordsChecked == 3_000)
        var options = Store.Options()
        options.readOnly = true
        let copy = try Store(path: dir.child("backup"), options: options)
        #expect(try history(copy, through: .max).map(\.seq) == Array(1...3_000))
        #expect(copy.projection == referenceProjection(events))
    }

    @Test("an archive an interrupted first compaction left is not copied; the backup verifies")
    func leftoverArchiveLeftOut() throws {
        let dir = TemporaryDirectory()
        let path = try makeStore(dir, events: 20)
        // What `compact --archive` leaves when it stops before recording anything.
        try FileManager.default.createDirectory(atPath: path + "/archive", withIntermediateDirectories: true)
        do {
            var options = Environment.Options()
            options.maxDatabases = 4
            let archive = try Environment(path: path + "/archive", options: options)
            let log = try #require(try archive.openDatabase("log", create: true))
            let meta = try #require(try archive.openDatabase("meta", create: true))
            try archive.write { txn in
                try txn.put(meta, key: Array("format".utf8), value: Array("herald-archive 1".utf8))
                try txn.put(log, key: SeqKey(1).bytes, value: [1, 2, 3])
            }
        }
        let report = try StoreMaintenance(path: path).backup(to: dir.child("backup"))
        #expect(report.verify.isClean && report.environments == ["."])
        #expect(!FileManager.default.fileExists(atPath: dir.child("backup/archive")))
        #expect(report.lastSeq == 20)
    }
}
