import Foundation
import HeraldEvents

extension Store {
    /// What `herald stats` reports: counts by type, account and source, and sizes.
    public struct Statistics: Sendable {
        public var records = 0
        /// The first seq in the log (compaction moves older ones out); `nil` when it is empty.
        public var firstSeq: UInt64?
        /// The highest seq given out (``HistoryBounds/highWaterSeq``): the last record's, or more
        /// when compaction or a purge removed the newest records.
        public var lastSeq: UInt64 = 0
        public var byType: [String: Int] = [:]
        /// Records per account, in byte order of the names (a list: names are bytes, and a
        /// `String`-keyed dictionary would merge canonically equivalent ones).
        public var byAccount: [(name: String, records: Int)] = []
        /// Records per ingest format (`format` in exports: herald, telegram, …, library).
        public var byFormat: [String: Int] = [:]
        public var logBytes = 0
        /// The size of `data.mdb` on disk.
        public var fileBytes = 0
        public var mapBytes = 0
        public var usedBytes = 0
        public var quarantined = 0
        public var quarantineBytes = 0
        /// The seqs covered by stored snapshots, newest first.
        public var snapshotSeqs: [UInt64] = []
        /// The audit index (`herald index`), or `nil` when the store keeps none.
        public var auditIndex: AuditIndex.Statistics?
    }

    /// Scans the log and the store's databases.
    public func statistics() throws -> Statistics {
        var stats = Statistics()
        // Keyed by bytes: two accounts whose names are canonically equivalent stay two.
        var accounts: [NameKey: Int] = [:]
        try self.history.forEachRawLogRecord { seq, bytes in
            stats.records += 1
            stats.firstSeq = stats.firstSeq ?? seq
            stats.lastSeq = seq
            stats.logBytes += bytes.count + 8
            let record: LogRecord
            do {
                record = try LogRecord(seq: seq, bytes: bytes)
            } catch let damage as LogRecord.Damage {
                throw StoreError.damagedRecord(path: path, seq: seq, reason: damage.reason)
            }
            stats.byType[record.event.type.rawValue, default: 0] += 1
            accounts[NameKey(record.event.account), default: 0] += 1
            stats.byFormat[record.source.format, default: 0] += 1
            return true
        }
        stats.byAccount = accounts.sorted { $0.key < $1.key }.map { (name: $0.key.name, records: $0.value) }
        stats.lastSeq = max(stats.lastSeq, try self.history.bounds().highWaterSeq)
        let info = environment.info()
        stats.mapBytes = info.mapSize
        stats.usedBytes = info.usedBytes
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
        stats.fileBytes = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        let quarantined = try quarantine.all()
        stats.quarantined = quarantined.count
        stats.quarantineBytes = quarantined.reduce(0) { $0 + $1.raw.count }
        stats.snapshotSeqs = try snapshots.seqs().reversed()
        let index = try auditIndex.statistics()
        if index.through > 0 { stats.auditIndex = index }
        return stats
    }
}
