import Foundation
import HeraldEvents
import HeraldProjection
import LMDB

/// How much archived history a store keeps: archived records older than `maxAgeSeconds`,
/// or beyond the newest `maxBytes` of archived records, expire. Expired records are written
/// to a gzip file of export lines in ``exportDirectory`` (fsynced) before they are removed.
public struct ArchiveRetention: Sendable, Hashable {
    /// Archived records recorded longer ago than this expire; `nil`: no age limit.
    public var maxAgeSeconds: Int64?
    /// The oldest archived records expire while the archive's records (their stored bytes)
    /// exceed this; `nil`: no size limit.
    public var maxBytes: Int?
    /// Where the expired ranges are exported, `herald-archive-FIRST-LAST.jsonl.gz`.
    public var exportDirectory: String

    /// A retention policy exporting into `exportDirectory`.
    public init(maxAgeSeconds: Int64? = nil, maxBytes: Int? = nil, exportDirectory: String) {
        self.maxAgeSeconds = maxAgeSeconds
        self.maxBytes = maxBytes
        self.exportDirectory = exportDirectory
    }

    /// The name of the export of `first...last`: seqs zero-padded to 20 digits, so that the
    /// names sort in seq order (`zcat DIR/*.jsonl.gz | herald import -` reads them in order).
    public static func exportName(first: UInt64, last: UInt64) -> String {
        "herald-archive-\(padded(first))-\(padded(last)).jsonl.gz"
    }

    private static func padded(_ seq: UInt64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }
}

/// A range of history that archive retention exported to a file and removed from the store.
package struct ExportedRange: Sendable, Hashable {
    /// The first seq of the range (the kept history's origin before, plus one).
    package var first: UInt64
    /// The last seq of the range: the kept history now starts from the snapshot at it.
    package var last: UInt64
    /// The export file's name in the export directory.
    package var file: String
    /// The export directory, as a path that resolves from this process: the store's path
    /// followed by the directory inside it, or an absolute path (what stores from before 0.5
    /// recorded: the directory as the retention run was given it).
    package var directory: String
    /// Whether the stored ``directory`` is relative to the store's directory (set for
    /// ranges exported inside the store, `nil` otherwise and in stores from before 0.5).
    package var relativeToStore: Bool?
    /// Records exported (purged seqs leave gaps).
    package var records: Int
    /// When it was exported, milliseconds since the epoch.
    package var exportedAt: Int64
}

extension ExportedRange {
    /// The JSON object the `exports` database keeps (`schema/archive-export.md`).
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "first": .int(first), "last": .int(last), "file": .string(file), "directory": .string(directory),
            "records": .int(records), "exportedAt": .int(exportedAt),
        ]
        if let relativeToStore { fields["relativeToStore"] = .bool(relativeToStore) }
        return .object(fields)
    }

    /// The range of the object ``json`` writes; `nil` when it is not one.
    init?(json: JSONValue) {
        guard let fields = json.object, let first = fields["first"]?.unsigned, let last = fields["last"]?.unsigned,
            let file = fields["file"]?.string, let directory = fields["directory"]?.string,
            let records = fields["records"]?.integer, let exportedAt = fields["exportedAt"]?.integer
        else { return nil }
        self.init(
            first: first, last: last, file: file, directory: directory, relativeToStore: fields["relativeToStore"]?.bool,
            records: Int(records), exportedAt: exportedAt)
    }
}

/// What ``StoreMaintenance/expireArchive(retention:now:dryRun:)`` did, or would do.
public struct RetentionReport: Sendable, Hashable {
    /// Whether this describes a dry run: nothing was written or removed.
    public var dryRun = false
    /// Where the kept history started before: the origin (0: seq 1).
    public var previousOrigin: UInt64 = 0
    /// Where it starts now; records in `previousOrigin+1...origin` expired.
    public var origin: UInt64 = 0
    /// Archived records expired (exported, then removed).
    public var recordsExpired = 0
    /// The stored bytes of the archived records in the kept history, before and after.
    public var archiveBytesBefore = 0
    /// The stored bytes of the archived records left.
    public var archiveBytesAfter = 0
    /// The export file written (its path), `nil` when nothing expired or in a dry run.
    public var exportFile: String?
    /// Its compressed size in bytes.
    public var exportFileBytes = 0
    /// The expired seqs, or `nil` when none.
    public var expiredRange: ClosedRange<UInt64>? { origin > previousOrigin ? (previousOrigin + 1)...origin : nil }
}

extension Store {
    /// The durable steps of archive retention, in order (for ``Options/retentionFault``).
    package enum RetentionStep: Sendable {
        /// The export file is written, fsynced and renamed; the store is unchanged.
        case exported
        /// The new origin is committed; the expired records are still in the archive.
        case committed
    }

    /// The ranges archive retention exported and removed, oldest first.
    package func exportedRanges() throws -> [ExportedRange] {
        guard let database = try existingAuxiliary(.exports) else { return [] }
        return try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                var ranges: [ExportedRange] = []
                var entry = try cursor.first()
                while let current = entry {
                    if let json = try? JSONParser.parse(Array(current.value)), var range = ExportedRange(json: json) {
                        if range.relativeToStore == true { range.directory = path + "/" + range.directory }
                        ranges.append(range)
                    }
                    entry = try cursor.next()
                }
                return ranges
            }
        }
    }

    /// Finds the expired prefix of the archived history and, when `writing`, exports it,
    /// moves the origin past it and deletes it from the archive.
    func expireArchivedRecords(_ retention: ArchiveRetention, now: Int64, writing: Bool) throws -> RetentionReport {
        let history = try self.history.facts()
        var report = RetentionReport(previousOrigin: history.origin, origin: history.origin)
        guard let archive = try archive() else { return report }
        if writing { try deleteArchived(archive, through: history.origin) }
        guard history.origin < history.base else { return report }
        try archive.forEachRawRecord(from: history.origin + 1, through: history.base) { _, bytes in
            report.archiveBytesBefore += bytes.count
            return true
        }
        let excess = retention.maxBytes.map { max(0, report.archiveBytesBefore - $0) } ?? 0
        let cutoff = retention.maxAgeSeconds.map { now - $0 * 1000 } ?? .min
        let first = history.origin + 1
        let writer = writing
            ? try GzipFileWriter(directory: retention.exportDirectory, temporaryName: "herald-archive-\(first)") : nil
        var projection = writing ? try originProjection(history) : nil
        var expiredBytes = 0
        var line = JSONWriter()
        var buffer: [UInt8] = []
        try archive.forEachRawRecord(from: first, through: history.base) { seq, bytes in
            let record = try Self.decodeRecord(seq: seq, bytes: bytes, in: archive.path)
            guard expiredBytes < excess || record.recordedAt < cutoff else { return false }
            expiredBytes += bytes.count
            report.recordsExpired += 1
            report.origin = seq
            if let writer {
                line.reset()
                record.writeExportLine(to: &line)
                buffer.append(contentsOf: line.bytes)
                buffer.append(UInt8(ascii: "\n"))
                if buffer.count >= 1 << 20 {
                    try writer.write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
                projection?.replay(record.event, seq: seq)
            }
            return true
        }
        report.archiveBytesAfter = report.archiveBytesBefore - expiredBytes
        guard let writer, var projection, report.origin > history.origin else { return report }
        // 1. The export, durable under its final name.
        try writer.write(buffer)
        let name = ArchiveRetention.exportName(first: first, last: report.origin)
        try removeUnrecordedExports(startingAt: first, in: retention.exportDirectory, keeping: name)
        report.exportFileBytes = try writer.finish(as: name)
        report.exportFile = retention.exportDirectory + "/" + name
        try options.retentionFault?(.exported)
        // 2. The new origin, its snapshot and the exported range, in one commit.
        projection.settleView()
        let directory = Self.recordedExportDirectory(retention.exportDirectory, store: path)
        let exported = ExportedRange(
            first: first, last: report.origin, file: name, directory: directory.path,
            relativeToStore: directory.relativeToStore ? true : nil, records: report.recordsExpired, exportedAt: now)
        var next = history
        next.origin = report.origin
        let snapshots = try auxiliary(.snapshots)
        let exports = try auxiliary(.exports)
        let snapshot = report.origin == history.base ? nil : SnapshotEnvelope(seq: report.origin, payload: projection.snapshot()).encoded
        try environment.storeWrite { txn in
            if let snapshot { try txn.put(snapshots, key: SeqKey(report.origin).bytes, value: snapshot) }
            if history.origin > 0 { try txn.delete(snapshots, key: SeqKey(history.origin).bytes) }
            try txn.put(exports, key: SeqKey(first).bytes, value: exported.json.bytes)
            try setHistory(next, txn)
        }
        try options.retentionFault?(.committed)
        // 3. The expired records, now outside the history.
        try deleteArchived(archive, through: report.origin)
        logger.notice(
            "archive retention exported and removed records",
            metadata: ["first": "\(first)", "last": "\(report.origin)", "records": "\(report.recordsExpired)", "file": "\(name)"])
        return report
    }

    /// How the `exports` database records `directory` so that any later process finds it,
    /// whatever its working directory: relative to the store's directory when inside it (so
    /// that the store and its exports move together), else absolute.
    static func recordedExportDirectory(_ directory: String, store: String) -> (path: String, relativeToStore: Bool) {
        let exports = FileSystem.absolute(directory), root = FileSystem.absolute(store)
        if exports == root { return (".", true) }
        let prefix = root == "/" ? "/" : root + "/"
        if exports.hasPrefix(prefix) { return (String(exports.dropFirst(prefix.count)), true) }
        return (exports, false)
    }

    /// The state at the origin: its snapshot, or the empty state at seq 0.
    private func originProjection(_ history: History) throws -> Projection {
        guard history.origin > 0 else { return Projection(configuration: options.projection) }
        switch try loadSnapshot(seq: history.origin) {
        case .success(let projection): return projection
        case .failure(let damage): throw StoreError.damagedSnapshot(path: path, seq: history.origin, reason: damage.reason)
        }
    }

    /// Deletes the archived records at or below `through` (outside the kept history), in chunks.
    private func deleteArchived(_ archive: Archive, through: UInt64) throws {
        guard through > 0 else { return }
        var seqs: [UInt64] = []
        try archive.forEachRawRecord(through: through) { seq, _ in
            seqs.append(seq)
            return true
        }
        for chunk in seqs.chunks(of: Self.compactionChunk) { try archive.delete(chunk) }
    }

    /// Removes export files for a range starting at `first` that no commit recorded: a run
    /// that crashed between its export and its commit left them, and the records they hold
    /// are still in the archive. (Left, they would overlap the next export's range.)
    private func removeUnrecordedExports(startingAt first: UInt64, in directory: String, keeping name: String) throws {
        let prefix = String(ArchiveRetention.exportName(first: first, last: 0).dropLast("00000000000000000000.jsonl.gz".count))
        let recorded = Set(try exportedRanges().map(\.file))
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where file.hasPrefix(prefix) && file.hasSuffix(".jsonl.gz") && file != name && !recorded.contains(file) {
            try FileSystem.remove(directory + "/" + file)
        }
    }
}

extension StoreMaintenance {
    /// Expires archived history under `retention`: the oldest archived records that are too
    /// old or beyond the size limit are written, as `herald export` lines, to a gzip file
    /// in the export directory, fsynced; then the kept history's start (its origin) moves
    /// past them, with a snapshot at the new origin standing for them, and they are removed
    /// from the archive, whose file is rewritten without free pages. Takes the writer lock
    /// (a dry run does not); only archived records (at or below the compaction base) ever
    /// expire, never the log.
    ///
    /// Crash-safe: the export is durable before the history changes, and the history changes
    /// (new origin, its snapshot, the exported range recorded) in one commit before any
    /// archived record is deleted; archived records left at or below the origin by a crash
    /// are outside the history, and the next run deletes them. A partial export file is
    /// removed; a whole one left by a run that crashed before its commit is replaced.
    ///
    /// - Parameters:
    ///   - retention: the limits, and where the expired records are exported.
    ///   - now: the time the age limit counts back from, milliseconds since the epoch.
    ///   - dryRun: report what would expire, and write or remove nothing.
    /// - Returns: the expired range, the export file and the archive's bytes before and after.
    @discardableResult
    public func expireArchive(
        retention: ArchiveRetention, now: Int64 = Int64(Date().timeIntervalSince1970 * 1000), dryRun: Bool = false
    ) throws -> RetentionReport {
        if dryRun {
            var report = try openReadOnly().expireArchivedRecords(retention, now: now, writing: false)
            report.dryRun = true
            return report
        }
        return try withExclusiveStore { store in
            try store.expireArchivedRecords(retention, now: now, writing: true)
        }
    }
}
