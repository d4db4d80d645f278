import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The maintenance operations through ``StoreMaintenance``, on real stores: a dry run changes
/// no byte, a real run reports the same on an identical copy, and each error carries its code.
@Suite("Store maintenance")
struct StoreMaintenanceTests {
    /// A store of `count` random events, one recorded each second, with a snapshot after
    /// `snapshotAt` and a Telegram key; compacted into the archive when `archived`.
    func makeStore(_ dir: TemporaryDirectory, count: Int = 1_200, snapshotAt: Int = 1_000, archived: Bool = false) throws {
        let events = randomEvents(count: count, seed: 34)
        let options = fastOptionsRecordingEachSecond()
        do {
            let store = try Store(path: dir.path, options: options)
            try store.append(contentsOf: events[..<snapshotAt].map { ($0, .library) })
            try store.snapshot()
            try store.append(contentsOf: events[snapshotAt...].map { ($0, .library) })
            try store.keyring.add(StoredKey(id: 7, account: events[0].account, bytes: Array(repeating: 9, count: 256)))
        }
        if archived { try StoreMaintenance(path: dir.path, options: fastOptions()).compact() }
    }

    /// An identical copy of the store in `dir`, in a new temporary directory.
    func twin(of dir: TemporaryDirectory) throws -> TemporaryDirectory {
        let copy = TemporaryDirectory()
        try FileManager.default.removeItem(atPath: copy.path)
        try FileManager.default.copyItem(atPath: dir.path, toPath: copy.path)
        return copy
    }

    /// The bytes of every data file of the store in `path` (its own and the archive's).
    func dataFiles(_ path: String) throws -> [Data] {
        try [path + "/data.mdb", path + "/archive/data.mdb"].filter { FileManager.default.fileExists(atPath: $0) }.map {
            try Data(contentsOf: URL(fileURLWithPath: $0))
        }
    }

    /// The code of the ``StoreError`` that `body` throws.
    func errorCode(_ body: () throws -> Void) -> StoreError.Code? {
        do {
            try body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            Issue.record("not a StoreError: \(error)")
            return nil
        }
    }

    @Test("compact: a dry run changes nothing; the run reports the same on a copy")
    func compact() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir)
        let copy = try twin(of: dir)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let before = try dataFiles(dir.path)
        let plan = try maintenance.compact(dryRun: true)
        #expect(plan.dryRun && plan.base == 1_000 && plan.recordsArchived == 1_000)
        #expect(try dataFiles(dir.path) == before)

        let report = try maintenance.compact()
        #expect(report == (try StoreMaintenance(path: copy.path, options: fastOptions()).compact()))
        #expect(!report.dryRun && report.base == 1_000 && report.recordsRemoved == 1_000)
        #expect(try Store(path: dir.path, options: fastOptions()).history.bounds().firstSeqInLog == 1_001)
        #expect(try maintenance.verify().isClean)
    }

    @Test("compact: async, as the synchronous one")
    func compactAsync() async throws {
        let dir = TemporaryDirectory()
        try makeStore(dir)
        let copy = try twin(of: dir)
        let report = try await StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        #expect(report.historyDiscarded && report.base == 1_000)
        // A synchronous closure: the synchronous `compact`.
        let synchronous = try { try StoreMaintenance(path: copy.path, options: fastOptions()).compact(discardingHistory: true) }()
        #expect(synchronous == report)
    }

    @Test("purge: a dry run changes nothing; the run reports the same on a copy")
    func purge() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let copy = try twin(of: dir)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let account = try Store(path: dir.path, options: fastOptions()).accountNames()[0]
        let before = try dataFiles(dir.path)
        let plan = try maintenance.purge(account: account, dryRun: true)
        #expect(plan.dryRun && plan.recordsRemoved + plan.archivedRecordsRemoved > 0)
        #expect(try dataFiles(dir.path) == before)

        let report = try maintenance.purge(account: account)
        #expect(report == (try StoreMaintenance(path: copy.path, options: fastOptions()).purge(account: account)))
        #expect(report.recordsRemoved == plan.recordsRemoved && report.archivedRecordsRemoved == plan.archivedRecordsRemoved)
        #expect(try !Store(path: dir.path, options: fastOptions()).accountNames().contains(account))
        #expect(try maintenance.verify().isClean)
        #expect(errorCode { try maintenance.purge(account: account) } == .unknownAccount)
    }

    @Test("expireArchive: a dry run writes nothing; the run reports the same on a copy")
    func expireArchive() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let copy = try twin(of: dir)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let exports = TemporaryDirectory()
        let retention = ArchiveRetention(maxBytes: 20_000, exportDirectory: exports.child("mine"))
        let before = try dataFiles(dir.path)
        let plan = try maintenance.expireArchive(retention: retention, now: 2_000_000, dryRun: true)
        #expect(plan.dryRun && plan.origin > 0 && plan.exportFile == nil)
        #expect(try dataFiles(dir.path) == before)
        #expect(!FileManager.default.fileExists(atPath: retention.exportDirectory))

        let report = try maintenance.expireArchive(retention: retention, now: 2_000_000)
        var former = try StoreMaintenance(path: copy.path, options: fastOptions()).expireArchive(
            retention: ArchiveRetention(maxBytes: 20_000, exportDirectory: exports.child("theirs")), now: 2_000_000)
        #expect(former.exportFile == exports.child("theirs") + "/" + ArchiveRetention.exportName(first: 1, last: report.origin))
        former.exportFile = report.exportFile
        #expect(report == former)
        #expect(report.origin == plan.origin && report.recordsExpired == Int(plan.origin))
        #expect(try Store(path: dir.path, options: fastOptions()).exportedRanges().map(\.last) == [report.origin])
    }

    @Test("salvage: copies a sound store whole, the same each time; refuses a destination holding a store")
    func salvage() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let destinations = TemporaryDirectory()
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let report = try maintenance.salvage(to: destinations.child("mine"))
        #expect(report == (try maintenance.salvage(to: destinations.child("theirs"))))
        #expect(report.recordsCopied == 1_200 && report.lostSeqs.isEmpty && report.keysCopied == 1)
        #expect(try StoreMaintenance(path: destinations.child("mine"), options: fastOptions()).verify().isClean)
        #expect(errorCode { _ = try maintenance.salvage(to: destinations.child("mine")) } == .remnants)
    }

    @Test("removeKey: removes the key, as on a copy; false for a key not there")
    func removeKey() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir)
        let copy = try twin(of: dir)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        #expect(try maintenance.removeKey(id: 7))
        #expect(try StoreMaintenance(path: copy.path, options: fastOptions()).removeKey(id: 7))
        #expect(try Store(path: dir.path, options: fastOptions()).keyring.all().isEmpty)
        #expect(try !maintenance.removeKey(id: 7))
        #expect(try dataFiles(dir.path) == dataFiles(copy.path))
    }

    @Test("backup: the same copy while the store is open; refuses a destination that is not empty")
    func backup() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let destinations = TemporaryDirectory()
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let report = try maintenance.backup(to: destinations.child("mine"))
        var readOnly = fastOptions()
        readOnly.readOnly = true
        let open = try Store(path: dir.path, options: readOnly)
        let former = try StoreMaintenance(path: open.path, options: open.options).backup(to: destinations.child("theirs"))
        #expect(report.destination == destinations.child("mine") && former.destination == destinations.child("theirs"))
        #expect(report.environments == former.environments && report.files == former.files && report.bytes == former.bytes)
        #expect(report.firstSeq == former.firstSeq && report.lastSeq == former.lastSeq && report.verify == former.verify)
        // The same history and state (the files differ: each copy is taken at its own transaction).
        let copies = try ["mine", "theirs"].map { try Store(path: destinations.child($0), options: readOnly) }
        #expect(try copies[0].history.records(from: 1, limit: 2_000) == copies[1].history.records(from: 1, limit: 2_000))
        #expect(try copies[0].history.records(from: 1, limit: 2_000).count == 1_200)
        #expect(copies[0].projection.snapshot() == copies[1].projection.snapshot())
        #expect(report.verify.isClean && report.firstSeq == 1 && report.lastSeq == 1_200)
        #expect(errorCode { _ = try maintenance.backup(to: destinations.child("mine")) } == .backupRefused)
    }

    @Test("verify: over the directory, as on the store opened read-only, and it finds damage")
    func verify() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let report = try maintenance.verify()
        var readOnly = fastOptions()
        readOnly.readOnly = true
        readOnly.replayOnOpen = false
        #expect(report == (try Store(path: dir.path, options: readOnly).verify()))
        #expect(report.isClean && report.archivedRecordsChecked == 1_000 && report.recordsChecked == 200)
        var seqs: [UInt64] = []
        _ = try maintenance.verify(checkingSnapshots: false) { seq, _ in seqs.append(seq) }
        #expect(seqs.isEmpty, "fewer than 4,096 records: no progress call")
    }

    @Test("each operation that changes the store refuses one open for writing, and a directory without a store")
    func errors() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let retention = ArchiveRetention(maxBytes: 0, exportDirectory: dir.child("exports"))
        do {
            let writer = try Store(path: dir.path, options: fastOptions())
            #expect(errorCode { try maintenance.compact() } == .locked)
            #expect(errorCode { try maintenance.purge(account: "tg:nobody") } == .locked)
            #expect(errorCode { try maintenance.expireArchive(retention: retention) } == .locked)
            #expect(errorCode { _ = try maintenance.removeKey(id: 7) } == .locked)
            writer.close()
        }
        let empty = StoreMaintenance(path: TemporaryDirectory().path, options: fastOptions())
        #expect(errorCode { try empty.compact() } == .notFound)
        #expect(errorCode { try empty.purge(account: "tg:nobody") } == .notFound)
        #expect(errorCode { try empty.expireArchive(retention: retention) } == .notFound)
        #expect(errorCode { _ = try empty.removeKey(id: 7) } == .notFound)
        #expect(errorCode { _ = try empty.backup(to: dir.child("backup")) } == .notFound)
        #expect(errorCode { _ = try empty.verify() } == .notFound)
        #expect(errorCode { try empty.compact(dryRun: true) } == .notFound)
    }
}
