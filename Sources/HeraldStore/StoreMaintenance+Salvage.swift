import HeraldProjection
import LMDB

/// What ``StoreMaintenance/salvage(to:)`` recovered and what it could not.
public struct SalvageReport: Sendable, Hashable {
    /// Records copied into the new store (log and archive together).
    public var recordsCopied = 0
    /// Of them, records that came from `archive/`.
    public var archivedRecordsCopied = 0
    /// Seqs that the history should hold but no intact record was found for, as ranges.
    public var lostSeqs: [ClosedRange<UInt64>] = []
    /// Snapshots copied, by seq.
    public var snapshotsCopied: [UInt64] = []
    /// Snapshot entries found damaged (failed their checksum) and left out, by seq.
    public var snapshotsDropped: [UInt64] = []
    /// Stored keys and quarantine entries copied.
    public var keysCopied = 0
    public var quarantineCopied = 0
    /// What was wrong with the data files, as found (each names the file and the page).
    public var damage: [String] = []
    /// The seq of the snapshot the new store's state starts from, when one after the last
    /// loss survived (the state is then exact); `nil` when the state is a replay over the
    /// losses, or there were none.
    public var stateFromSnapshot: UInt64?
    /// The highest seq the damaged store had given out, as far as can be told.
    public var highWater: UInt64 = 0
    /// The compaction base kept (records up to it were dropped without an archive before
    /// the damage, and the base snapshot stands for them); 0 when none.
    public var base: UInt64 = 0

    /// Whether the newest commit's log could not be read whole (a damaged page, a file cut
    /// short), so seqs after ``highWater`` may have been lost as well, unseen.
    public var endUncertain = false

    /// The number of seqs lost.
    public var lostCount: UInt64 { lostSeqs.reduce(0) { $0 + $1.upperBound - $1.lowerBound + 1 } }
}

extension StoreMaintenance {
    /// Copies every record, snapshot, key and quarantine entry of this damaged store that
    /// still checks out into a new store at `destination` (which must not hold a store), and
    /// reports exactly which seqs were lost.
    ///
    /// Reads the data files with `pread` (`LMDB.DataFile`), never through LMDB, so no
    /// damage can crash it: the B-trees of the newest commit are walked, skipping damaged
    /// pages; the previous commit's trees are walked as well; and when either walk met
    /// damage, every intact leaf page of the file is scanned for records that no walk
    /// reached. Each record must pass its checksum and decode; a record's seq is its key.
    /// The new store holds all of them in its log (no archive); the seqs lost are recorded
    /// as gaps (so the new store reads and verifies) and listed in the report. Its state
    /// opens from the newest intact snapshot when no seq after it was lost (exact), else it
    /// is a replay over the losses. The new store is opened with ``options``.
    ///
    /// - Parameter destination: the directory of the new store; it must not hold a store
    ///   (``StoreError/Code/remnants`` otherwise).
    /// - Returns: what was copied, what was lost, and the damage found.
    public func salvage(to destination: String) throws -> SalvageReport {
        if FileSystem.exists(destination + "/data.mdb") {
            throw StoreError.remnants(path: destination, reason: "the destination already holds a store; salvage writes a new one")
        }
        var report = SalvageReport()
        var main = SalvagedFile()
        try main.read(path + "/data.mdb", report: &report)
        var archived = SalvagedFile()
        if FileSystem.exists(path + "/" + Archive.directoryName + "/data.mdb") {
            try archived.read(path + "/" + Archive.directoryName + "/data.mdb", report: &report)
        }
        // Without the `meta` database (lost with its page), the base is unknown: every
        // archived record is then taken as history.
        let metaLost = main.meta["format"] == nil
        let base = metaLost ? (archived.records.keys.max() ?? 0) : main.number("base")
        let archivedThrough = metaLost ? base : main.number("archived")
        report.endUncertain = main.newestLogIncomplete
        // Where the kept history starts (`meta` `origin`; older stores: 0 when the archive
        // stands for everything below the base, else the base). Records at or below it were
        // discarded on purpose, and the snapshot at it stands for them.
        let legacyComplete = base == 0 || archivedThrough >= base
        let origin: UInt64 = metaLost ? 0 : (main.meta["origin"] != nil ? main.number("origin") : (legacyComplete ? 0 : base))
        let complete = origin == 0
        var records = main.records.filter { $0.key > base }
        if origin < base {
            for (seq, record) in archived.records where seq > origin && seq <= base && records[seq] == nil {
                records[seq] = record
                report.archivedRecordsCopied += 1
            }
            // Log records an interrupted compaction left below the base are history too.
            for (seq, record) in main.records where seq > origin && seq <= base && records[seq] == nil { records[seq] = record }
        }
        let gaps = main.gaps.sorted { $0.lowerBound < $1.lowerBound }
        report.base = origin
        report.highWater = max(records.keys.max() ?? 0, base, gaps.last?.upperBound ?? 0)
        report.lostSeqs = Store.missing(
            from: origin + 1, through: report.highWater, present: Set(records.keys), gaps: gaps)
        let lastLoss = report.lostSeqs.last?.upperBound ?? 0
        report.snapshotsDropped = main.damagedSnapshots.sorted()

        var storeOptions = options
        storeOptions.readOnly = false
        storeOptions.create = true
        storeOptions.snapshotInterval = 0
        let store = try Store(path: destination, options: storeOptions)
        if !complete {
            // The records up to the origin were discarded: the new store starts from the
            // same point, with its snapshot standing for them, and holds every later record
            // in its log.
            guard main.snapshots[origin] != nil else {
                throw StoreError.damagedSnapshot(
                    path: path, seq: origin,
                    reason: "the snapshot the kept history starts from, which stands for the records discarded before it, is lost")
            }
            try store.environment.storeWrite { txn in
                try store.setHistory(Store.History(base: origin, archivedThrough: origin, origin: origin), txn)
            }
        }
        let snapshots = try store.auxiliary(.snapshots)
        try store.environment.storeWrite { txn in
            for (seq, bytes) in main.snapshots where complete || seq >= origin {
                try txn.put(snapshots, key: SeqKey(seq).bytes, value: bytes)
            }
        }
        report.snapshotsCopied = main.snapshots.keys.filter { complete || $0 >= origin }.sorted()
        let ordered = records.keys.sorted()
        for start in stride(from: 0, to: ordered.count, by: Store.compactionChunk) {
            let chunk = ordered[start..<min(start + Store.compactionChunk, ordered.count)]
            try store.importRecords(chunk.map { records[$0]! })
            report.recordsCopied += chunk.count
        }
        try store.recordLosses(report.lostSeqs, highWater: report.highWater)
        if !main.keys.isEmpty {
            let database = try store.auxiliary(.keys)
            try store.environment.storeWrite { txn in
                for (key, value) in main.keys { try txn.put(database, key: key, value: value) }
            }
            report.keysCopied = main.keys.count
        }
        if !main.quarantine.isEmpty {
            let database = try store.auxiliary(.quarantine)
            try store.environment.storeWrite { txn in
                for (key, value) in main.quarantine { try txn.put(database, key: key, value: value) }
            }
            report.quarantineCopied = main.quarantine.count
        }
        report.stateFromSnapshot = report.snapshotsCopied.last { $0 >= lastLoss && $0 <= report.highWater }
        return report
    }

}

extension Store {
    /// The seqs in `from...through` that are neither present nor in a gap, as ranges; in
    /// time proportional to the seqs present and the gaps, not to the range.
    static func missing(
        from: UInt64, through: UInt64, present: Set<UInt64>, gaps: [ClosedRange<UInt64>]
    ) -> [ClosedRange<UInt64>] {
        guard from <= through else { return [] }
        // Everything accounted for, as sorted ranges: the seqs present and the gaps.
        var covered = present.sorted().map { $0...$0 } + gaps
        covered.sort { $0.lowerBound < $1.lowerBound }
        var lost: [ClosedRange<UInt64>] = []
        var next = from
        for range in covered where range.upperBound >= next {
            if range.lowerBound > through { break }
            if range.lowerBound > next { lost.append(next...(range.lowerBound - 1)) }
            if range.upperBound >= through { return lost }
            next = max(next, range.upperBound + 1)
        }
        if next <= through { lost.append(next...through) }
        return lost
    }

    /// Records lost seqs as gaps (as import does for the seqs its input skips), so that the
    /// new store reads; and, when the last seqs were lost, keeps the high-water mark so that
    /// no seq is given out twice.
    func recordLosses(_ lost: [ClosedRange<UInt64>], highWater: UInt64) throws {
        guard !lost.isEmpty else { return }
        let gaps = try auxiliary(.gaps)
        try environment.storeWrite { txn in
            for range in lost { try txn.put(gaps, key: SeqKey(range.lowerBound).bytes, value: SeqKey(range.upperBound).bytes) }
        }
    }
}

/// What salvage found in one data file.
private struct SalvagedFile {
    var records: [UInt64: LogRecord] = [:]
    var snapshots: [UInt64: [UInt8]] = [:]
    var damagedSnapshots: Set<UInt64> = []
    var meta: [String: [UInt8]] = [:]
    var gaps: [ClosedRange<UInt64>] = []
    var keys: [[UInt8]: [UInt8]] = [:]
    var quarantine: [[UInt8]: [UInt8]] = [:]
    /// Whether the walk of the newest commit met damage (so its log may hold more than was read).
    var newestLogIncomplete = false

    func number(_ name: String) -> UInt64 {
        meta[name].flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
    }

    mutating func read(_ path: String, report: inout SalvageReport) throws {
        guard let file = try StoreError.mappingLMDB({ try DataFile(path: path) }) else {
            report.damage.append("\(path): missing")
            return
        }
        let header = file.header()
        for case .failure(let damage) in header.metas { report.damage.append(damage.description) }
        let metas = header.metas.compactMap { try? $0.get() }.sorted { $0.transactionId > $1.transactionId }
        var damaged = metas.isEmpty
        newestLogIncomplete = metas.isEmpty
        for (index, meta) in metas.enumerated() {
            var entries: [(String, [UInt8], [UInt8])] = []
            let walk = file.walk(meta, stopAtFirst: false) { database, key, value in entries.append((database, key, value)) }
            for (database, key, value) in entries { take(database, key, value, fromNewest: index == 0) }
            if !walk.damage.isEmpty {
                damaged = true
                if index == 0 {
                    report.damage.append(contentsOf: walk.damage.map(\.description))
                    newestLogIncomplete = true
                }
            }
        }
        // Pages written after the newest commit (a commit whose meta page never reached the
        // disk) may hold records acknowledged before the crash: take those after the rest.
        if let newest = metas.first, !file.pagesPastLastCommit(newest).isEmpty {
            let known = records.keys.max() ?? 0
            var recovered = 0
            // That commit also reused freed pages inside the file: look at every leaf page for
            // seqs after the last one the commit LMDB reads holds (records never change, so a
            // seq found anywhere is that record).
            file.scanLeaves(pageSize: newest.pageSize, keySize: 8) { _, key, value in
                guard let seq = SeqKey(bytes: key.withUnsafeBytes { $0 })?.seq, seq > known, records[seq] == nil,
                    let record = value.withUnsafeBytes({ try? LogRecord(seq: seq, bytes: $0) })
                else { return }
                records[seq] = record
                recovered += 1
            }
            if recovered > 0 {
                report.damage.append(
                    "\(path): \(recovered) records after seq \(known) recovered from pages written after the newest commit "
                        + "(transaction \(newest.transactionId)), whose meta page never reached the disk")
            }
        }
        guard damaged else { return }
        // Some tree could not be walked whole: look at every intact leaf page for records.
        let pageSize = metas.first?.pageSize ?? 4096
        // A record found only by the scan may carry a damaged key that still sorts on its
        // page; a seq far past everything the walks found is such a key, not history.
        let walkedLast = records.keys.max() ?? 0
        var scanned: [UInt64: LogRecord] = [:]
        file.scanLeaves(pageSize: pageSize, keySize: 8) { _, key, value in
            guard let seq = SeqKey(bytes: key.withUnsafeBytes { $0 })?.seq else { return }
            if records[seq] == nil, let record = value.withUnsafeBytes({ try? LogRecord(seq: seq, bytes: $0) }) {
                scanned[seq] = scanned[seq] ?? record
            } else if snapshots[seq] == nil, value.withUnsafeBytes({ (try? SnapshotEnvelope.check($0, expectedSeq: seq)) != nil }) {
                snapshots[seq] = value
                damagedSnapshots.remove(seq)
            }
        }
        let limit = walkedLast == 0 ? UInt64.max : walkedLast + UInt64(scanned.count)
        for (seq, record) in scanned where seq <= limit { records[seq] = record }
        if !scanned.isEmpty {
            report.damage.append("\(path): \(scanned.count) records found only by scanning every page")
        }
    }

    /// Takes one entry of a walked tree; entries of the newest commit win.
    mutating func take(_ database: String, _ key: [UInt8], _ value: [UInt8], fromNewest: Bool) {
        switch database {
        case "log":
            guard let seq = SeqKey(bytes: key.withUnsafeBytes { $0 })?.seq, records[seq] == nil,
                let record = value.withUnsafeBytes({ try? LogRecord(seq: seq, bytes: $0) })
            else { return }
            records[seq] = record
        case "snapshots":
            guard let seq = SeqKey(bytes: key.withUnsafeBytes { $0 })?.seq, snapshots[seq] == nil else { return }
            if value.withUnsafeBytes({ (try? SnapshotEnvelope.check($0, expectedSeq: seq)) != nil }) {
                snapshots[seq] = value
                damagedSnapshots.remove(seq)
            } else if fromNewest {
                damagedSnapshots.insert(seq)
            }
        case "meta":
            if fromNewest || meta[String(decoding: key, as: UTF8.self)] == nil {
                meta[String(decoding: key, as: UTF8.self)] = value
            }
        case "gaps":
            guard fromNewest, let first = SeqKey(bytes: key.withUnsafeBytes { $0 })?.seq,
                let last = SeqKey(bytes: value.withUnsafeBytes { $0 })?.seq, first <= last
            else { return }
            gaps.append(first...last)
        case "keys":
            if fromNewest, value.withUnsafeBytes({ (try? LogRecord.verifyChecksum($0)) != nil }) { keys[key] = value }
        case "quarantine":
            if fromNewest, value.withUnsafeBytes({ (try? LogRecord.verifyChecksum($0)) != nil }) { quarantine[key] = value }
        default:
            break
        }
    }
}
