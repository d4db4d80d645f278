import Foundation
import HeraldEvents
import LMDB
import Testing

@testable import HeraldStore

#if canImport(Glibc)
import Glibc
import HeraldTestSupport
#endif

/// Stores opened on one directory more than once in one process: a writable store beside
/// read-only ones, read-only ones together, compaction beside a reader. LMDB forbids two
/// open environments of one database in a process (closing one drops the process's locks on
/// `lock.mdb` and tears down state the other still uses), so they must share one; releasing
/// one of them must leave the others whole.
@Suite("Stores sharing a directory in one process")
struct SameProcessTests {
    private func notify(_ id: Int64) -> Event {
        Event(account: "tg:1", .notify(.init(
            chat: "user:5", kind: .message, id: id, date: 1_754_385_290, title: "Alice", body: "hi \(id)")))
    }

    private func readOnly() -> Store.Options {
        var options = fastOptions()
        options.readOnly = true
        return options
    }

    /// The pids in `lock.mdb`'s reader table as another process (`mdb_stat -r`) reads it.
    private func readerPids(_ path: String) throws -> [String] {
        // Its exit status is not checked: mdb_stat -r exits 1 even when it lists the table.
        let stat = try run("/usr/bin/mdb_stat", ["-r", path])
        // After the header lines, each live reader is "pid thread txnid".
        return stat.output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[0].allSatisfy(\.isNumber) ? String(fields[0]) : nil
        }
    }

    @Test("a writable and a read-only store on one directory see each other's commits; releasing the reader leaves the writer whole")
    func writerThenReader() throws {
        let dir = TemporaryDirectory()
        let writer = try Store(path: dir.path, options: fastOptions())
        try writer.append(notify(1))
        do {
            let reader = try Store(path: dir.path, options: readOnly())
            #expect(reader.lastSeq == 1)
            try writer.append(notify(2))
            #expect(try reader.history.bounds().lastSeqInLog == 2)
            #expect(try reader.refresh().map(\.seq) == [2])
            #expect(reader.projection == writer.projection)
            #expect {
                try reader.append(notify(3))
            } throws: { error in
                guard let error = error as? StoreError, error.code == .readOnly, let path = error.path else { return false }
                return path == dir.path
            }
        }
        // The reader is released; the writer still writes and reads.
        try writer.append(notify(3))
        #expect(try writer.history.records().map(\.seq) == [1, 2, 3])
        // Another process started now still sees this process in the reader table while it
        // reads: releasing the reader did not clear the writer's reader slots or locks.
        let pids = try writer.environment.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
        try writer.append(notify(4))
        #expect(try writer.history.bounds().lastSeqInLog == 4)
    }

    @Test("a read-only store sharing a writer's environment refuses every write, and writes nothing")
    func readerSharingWriterWritesNothing() throws {
        let dir = TemporaryDirectory()
        let writer = try Store(path: dir.path, options: fastOptions())
        try writer.append(notify(1))
        try writer.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: [1, 2, 3]))
        try writer.quarantine.add([QuarantinedPayload(receivedAt: 1, format: "x", input: "-", line: 0, reason: "r", raw: [1])])
        let records = try writer.history.records()
        let reader = try Store(path: dir.path, options: readOnly())
        let before = writer.environmentInfo().lastTransactionId
        let writes: [(String, () throws -> Void)] = [
            ("append", { _ = try reader.append(notify(2)) }),
            ("append(contentsOf:)", { _ = try reader.append(contentsOf: [(notify(2), .library)]) }),
            ("appendBatch", { _ = try reader.appendBatch([(notify(2), .library)]) }),
            ("importRecords", { _ = try reader.importRecords(records) }),
            ("quarantine.add", { _ = try reader.quarantine.add([QuarantinedPayload(receivedAt: 2, format: "x", input: "-", line: 0, reason: "r", raw: [2])]) }),
            ("quarantine.remove", { _ = try reader.quarantine.remove(id: 1) }),
            ("keyring.add", { _ = try reader.keyring.add(StoredKey(id: 8, account: "tg:1", bytes: [4])) }),
            ("keyring.remove", { _ = try reader.keyring.remove(id: 7) }),
            ("snapshot", { _ = try reader.snapshot() }),
        ]
        for (name, write) in writes {
            #expect("\(name)") {
                try write()
            } throws: { error in
                guard let error = error as? StoreError, error.code == .readOnly, let path = error.path else { return false }
                return path == dir.path
            }
        }
        #expect {
            try reader.sync()
        } throws: { error in
            guard let error = error as? StoreError, error.code == .lmdb else { return false }
            return error.lmdbError == LMDBError(code: EACCES, operation: "mdb_env_sync", path: dir.path)
        }
        #expect(writer.environmentInfo().lastTransactionId == before)
        #expect(try reader.history.records() == records)
        #expect(try reader.keyring.all().map(\.id) == [7])
        #expect(try reader.quarantine.all().map(\.id) == [1])
        // The writer still writes.
        try writer.append(notify(2))
        #expect(try reader.history.bounds().lastSeqInLog == 2)
    }

    @Test("a read-only store opened first shares its environment with a writable one opened after it")
    func readerThenWriter() throws {
        let dir = TemporaryDirectory()
        do { try Store(path: dir.path, options: fastOptions()).append(notify(1)) }
        // The writer is released first.
        do {
            let reader = try Store(path: dir.path, options: readOnly())
            let writer = try Store(path: dir.path, options: fastOptions())
            try writer.append(notify(2))
            #expect(try reader.refresh().map(\.seq) == [2])
            withExtendedLifetime(writer) {}
            // The writer is released; the reader still reads.
            #expect(try reader.history.records().map(\.seq) == [1, 2])
            #expect(try reader.refresh().isEmpty)
            let pids = try reader.environment.read { _ in try readerPids(dir.path) }
            #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
        }
        // The reader is released first.
        let writer: Store
        do {
            let reader = try Store(path: dir.path, options: readOnly())
            writer = try Store(path: dir.path, options: fastOptions())
            try writer.append(notify(3))
            #expect(try reader.refresh().map(\.seq) == [3])
        }
        try writer.append(notify(4))
        #expect(try writer.history.records().map(\.seq) == [1, 2, 3, 4])
        let pids = try writer.environment.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
    }

    @Test("two read-only stores on one directory share; releasing one leaves the other reading")
    func twoReaders() throws {
        let dir = TemporaryDirectory()
        do {
            let writer = try Store(path: dir.path, options: fastOptions())
            try writer.append(contentsOf: (1...3).map { (notify($0), .library) })
        }
        let first = try Store(path: dir.path, options: readOnly())
        do {
            let second = try Store(path: dir.path, options: readOnly())
            #expect(second.projection == first.projection)
            #expect(try second.history.records().count == 3)
        }
        #expect(try first.history.records().map(\.seq) == [1, 2, 3])
        #expect(try first.verify().isClean)
        let pids = try first.environment.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
    }

    @Test("the archive is shared too: releasing a reader of it leaves the writer's archive readable")
    func archive() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 61)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events[..<300].map { ($0, .library) })
            try store.snapshot()
            try store.append(contentsOf: events[300...].map { ($0, .library) })
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        let writer = try Store(path: dir.path, options: fastOptions())
        var seqs: [UInt64] = []
        do {
            let reader = try Store(path: dir.path, options: readOnly())
            try reader.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array(1...400))
            seqs = []
            try writer.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array(1...400))
        }
        // The reader and its archive are released; the writer's archive still reads.
        seqs = []
        try writer.history.forEach { seqs.append($0.seq); return true }
        #expect(seqs == Array(1...400))
        #expect(try writer.verify().isClean)
        let archive = try #require(try writer.archive())
        let pids = try archive.environment.read { _ in try readerPids(archive.path) }
        #expect(pids.contains(String(getpid())), "archive reader table seen by mdb_stat: \(pids)")
    }

    @Test("compaction beside a read-only store of the same process: the reader keeps the old files, a store opened after uses the new ones")
    func compactionBesideReader() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 62)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events[..<200].map { ($0, .library) })
            try store.snapshot()
            try store.append(contentsOf: events[200..<300].map { ($0, .library) })
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()  // an archive to share
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.snapshot()
        }
        var seqs: [UInt64] = []
        do {
            let reader = try Store(path: dir.path, options: readOnly())
            try reader.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array(1...300))
            // Compaction runs in this process while the reader has both environments open.
            let report = try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
            #expect(report.base == 300 && report.recordsArchived == 100)
            // The reader still reads its environments, as a reader in another process would.
            seqs = []
            try reader.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array(1...300))
            // A writer opened now writes the compacted files, not the reader's old ones: another
            // process reading the directory finds its records.
            let writer = try Store(path: dir.path, options: fastOptions())
            #expect(try writer.history.bounds().firstSeqInLog == nil)
            for event in events[300...] { try writer.append(event) }
            let stat = try run("/usr/bin/mdb_stat", ["-s", "log", dir.path])
            #expect(stat.output.contains("Entries: 100"), "mdb_stat -s log: \(stat.output)")
            #expect(try reader.history.logRecords().isEmpty)
        }
        let reopened = try Store(path: dir.path, options: readOnly())
        seqs = []
        try reopened.history.forEach { seqs.append($0.seq); return true }
        #expect(seqs == Array(1...400))
        #expect(try reopened.verify().isClean)
        let sameState = reopened.projection == referenceProjection(events)
        #expect(sameState, "the reopened store's state differs from the reference")
    }
}
