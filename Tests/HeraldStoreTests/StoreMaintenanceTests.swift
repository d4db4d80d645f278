import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The maintenance operations through ``StoreMaintenance``, on real stores: a dry run changes
/// no byte, a real run reports what the former static member of `Store` reports on an
/// identical copy, and each error carries its code.
@Suite("Store maintenance", .testThreads)
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

    @Test("compact: a dry run changes nothing; the run reports what Store.compact reports on a copy")
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
        let former = try Store.formerCompact(path: copy.path, options: fastOptions())
        #expect(report == former)
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

    @Test("purge: a dry run changes nothing; the run reports what Store.purge reports on a copy")
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
        #expect(report == (try Store.formerPurge(path: copy.path, account: account, options: fastOptions())))
        #expect(report.recordsRemoved == plan.recordsRemoved && report.archivedRecordsRemoved == plan.archivedRecordsRemoved)
        #expect(try !Store(path: dir.path, options: fastOptions()).accountNames().contains(account))
        #expect(try maintenance.verify().isClean)
        #expect(errorCode { try maintenance.purge(account: account) } == .unknownAccount)
    }

    @Test("expireArchive: a dry run writes nothing; the run reports what Store.expireArchive reports on a copy")
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
        var former = try Store.formerExpireArchive(
            path: copy.path, retention: ArchiveRetention(maxBytes: 20_000, exportDirectory: exports.child("theirs")), now: 2_000_000,
            options: fastOptions())
        #expect(former.exportFile == exports.child("theirs") + "/" + ArchiveRetention.exportName(first: 1, last: report.origin))
        former.exportFile = report.exportFile
        #expect(report == former)
        #expect(report.origin == plan.origin && report.recordsExpired == Int(plan.origin))
        #expect(try Store(path: dir.path, options: fastOptions()).exportedRanges().map(\.last) == [report.origin])
    }

    @Test("salvage: copies a sound store whole, as Store.salvage does; refuses a destination holding a store")
    func salvage() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let destinations = TemporaryDirectory()
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let report = try maintenance.salvage(to: destinations.child("mine"))
        #expect(report == (try Store.formerSalvage(from: dir.path, to: destinations.child("theirs"), options: fastOptions())))
        #expect(report.recordsCopied == 1_200 && report.lostSeqs.isEmpty && report.keysCopied == 1)
        #expect(try StoreMaintenance(path: destinations.child("mine"), options: fastOptions()).verify().isClean)
        #expect(errorCode { _ = try maintenance.salvage(to: destinations.child("mine")) } == .remnants)
    }

    @Test("removeKey: removes the key as Store.removeKey does; false for a key not there")
    func removeKey() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir)
        let copy = try twin(of: dir)
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        #expect(try maintenance.removeKey(id: 7))
        #expect(try Store.formerRemoveKey(path: copy.path, id: 7, options: fastOptions()))
        #expect(try Store(path: dir.path, options: fastOptions()).keyring.all().isEmpty)
        #expect(try !maintenance.removeKey(id: 7))
        #expect(try dataFiles(dir.path) == dataFiles(copy.path))
    }

    @Test("backup: the same copy as Store.backup(to:) of the open store; refuses a destination that is not empty")
    func backup() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, archived: true)
        let destinations = TemporaryDirectory()
        let maintenance = StoreMaintenance(path: dir.path, options: fastOptions())
        let report = try maintenance.backup(to: destinations.child("mine"))
        var readOnly = fastOptions()
        readOnly.readOnly = true
        let former = try Store(path: dir.path, options: readOnly).formerBackup(to: destinations.child("theirs"))
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

/// The former maintenance members of `Store`, reached through a protocol (whose witnesses
/// they are) so that these tests compare them with ``StoreMaintenance`` without naming a
/// deprecated member.
private protocol FormerMaintenance {
    static func compact(
        path: String, through seq: UInt64?, discardingHistory: Bool, dryRun: Bool, options: Store.Options
    ) throws -> CompactionReport
    static func purge(path: String, account: String, dryRun: Bool, options: Store.Options) throws -> PurgeReport
    static func expireArchive(
        path: String, retention: ArchiveRetention, now: Int64, dryRun: Bool, options: Store.Options
    ) throws -> RetentionReport
    static func salvage(from damaged: String, to destination: String, options: Store.Options) throws -> SalvageReport
    static func removeKey(path: String, id: Int64, options: Store.Options) throws -> Bool
    func backup(to destination: String) throws -> BackupReport
}

extension Store: FormerMaintenance {}

extension FormerMaintenance {
    /// The former static members with their defaults, through the protocol's requirements.
    static func formerCompact(path: String, options: Store.Options) throws -> CompactionReport {
        try compact(path: path, through: nil, discardingHistory: false, dryRun: false, options: options)
    }
    static func formerPurge(path: String, account: String, options: Store.Options) throws -> PurgeReport {
        try purge(path: path, account: account, dryRun: false, options: options)
    }
    static func formerExpireArchive(path: String, retention: ArchiveRetention, now: Int64, options: Store.Options) throws
        -> RetentionReport
    {
        try expireArchive(path: path, retention: retention, now: now, dryRun: false, options: options)
    }
    static func formerSalvage(from damaged: String, to destination: String, options: Store.Options) throws -> SalvageReport {
        try salvage(from: damaged, to: destination, options: options)
    }
    static func formerRemoveKey(path: String, id: Int64, options: Store.Options) throws -> Bool {
        try removeKey(path: path, id: id, options: options)
    }
    func formerBackup(to destination: String) throws -> BackupReport { try backup(to: destination) }
}
