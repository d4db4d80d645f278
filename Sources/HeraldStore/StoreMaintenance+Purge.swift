import HeraldEvents
import HeraldProjection
import LMDB

/// What ``StoreMaintenance/purge(account:dryRun:)`` removed.
public struct PurgeReport: Sendable, Hashable {
    /// The account purged.
    public var account: String
    /// Log records removed.
    public var recordsRemoved = 0
    /// Archived records removed.
    public var archivedRecordsRemoved = 0
    /// Quarantine entries and Telegram keys removed.
    public var quarantineRemoved = 0
    /// Telegram keys removed.
    public var keysRemoved = 0
    /// The seq ranges the purge left as gaps.
    public var gaps: [ClosedRange<UInt64>] = []
    /// The snapshots written afresh without the account (for a dry run: the snapshots that
    /// would be rewritten or deleted).
    public var snapshots: [UInt64] = []
    /// Whether this describes a dry run: nothing was changed.
    public var dryRun = false
}

extension StoreMaintenance {
    /// Removes every trace of `account` (privacy): its log and archived records, every
    /// snapshot (rebuilt without it), the quarantine entries quoting it and its Telegram
    /// keys; then rewrites the data files so no freed page keeps the old bytes. The removed
    /// seqs are recorded as gaps (`gaps` database), which `verify` accepts. Takes the writer
    /// lock (a dry run does not).
    ///
    /// Each step commits on its own and the whole is idempotent: after a crash, purge again.
    /// Names compare byte for byte (SEMANTICS 1.1 §2): `é` precomposed and `e` + U+0301 are
    /// two accounts, and purging one leaves the other. An account that no record (nor the
    /// snapshot the history starts from) names throws ``StoreError/Code/unknownAccount``
    /// and changes nothing.
    ///
    /// - Parameters:
    ///   - account: the account to remove, not empty.
    ///   - dryRun: count what would be removed, and change nothing.
    /// - Returns: what was removed (or would be), and the seq ranges left as gaps.
    @discardableResult
    public func purge(account: String, dryRun: Bool = false) throws -> PurgeReport {
        precondition(!account.isEmpty, "purge needs an account name")
        if dryRun {
            return try openReadOnly().planPurge(account)
        }
        return try withExclusiveStore { store in
            try store.purgeAccount(account)
        }
    }
}

extension Store {
    /// The account's records, found in one pass over the log and one over the archive: their
    /// seqs.
    private struct AccountRecords {
        var log: [UInt64] = []
        var archived: [UInt64] = []
        var isEmpty: Bool { log.isEmpty && archived.isEmpty }
    }

    /// Every record of `account` in the log (those at or below the base too: an interrupted
    /// compaction may have left some there, and they hold the account's bytes as much as
    /// any other) and in the archive.
    private func records(of account: String) throws -> AccountRecords {
        var found = AccountRecords()
        try self.history.forEachRawLogRecord { seq, bytes in
            let record = try Self.decodeRecord(seq: seq, bytes: bytes, in: path)
            if record.event.account.isSameName(as: account) {
                found.log.append(seq)
            }
            return true
        }
        if let archive = try archive() {
            try archive.forEachRawRecord { seq, bytes in
                let record = try Self.decodeRecord(seq: seq, bytes: bytes, in: archive.path)
                if record.event.account.isSameName(as: account) {
                    found.archived.append(seq)
                }
                return true
            }
        }
        return found
    }

    /// Throws ``StoreError/Code/unknownAccount`` unless `account` has records
    /// (`found`) or is in `start`, the snapshot the kept history starts from.
    private func requireNamed(_ account: String, _ found: AccountRecords, start: Projection?) throws {
        guard found.isEmpty, start?.account(account) == nil else { return }
        throw StoreError.unknownAccount(path: path, account: account)
    }

    /// The snapshot the kept history starts from, or `nil` when it starts at seq 1; it must
    /// be readable before anything is deleted.
    private func originSnapshot(_ history: History) throws -> Projection? {
        guard !history.isComplete else { return nil }
        switch try loadSnapshot(seq: history.origin) {
        case .success(let projection): return projection
        case .failure(let damage): throw StoreError.damagedSnapshot(path: path, seq: history.origin, reason: damage.reason)
        }
    }

    /// Every account that a record of the log or the archive, or the snapshot the history
    /// starts from, names, in byte order; each name once, byte for byte.
    public func accountNames() throws -> [String] {
        var names = Set<NameKey>()
        let history = try self.history.facts()
        if history.origin > 0, case .success(let projection) = try loadSnapshot(seq: history.origin) {
            for name in projection.accounts { names.insert(NameKey(name)) }
        }
        try self.history.forEachRawLogRecord { seq, bytes in
            names.insert(NameKey(try Self.decodeRecord(seq: seq, bytes: bytes, in: path).event.account))
            return true
        }
        if let archive = try archive() {
            try archive.forEachRawRecord { seq, bytes in
                names.insert(NameKey(try Self.decodeRecord(seq: seq, bytes: bytes, in: archive.path).event.account))
                return true
            }
        }
        return names.sorted().map(\.name)
    }

    /// What purging `account` would remove, counted without changing anything.
    fileprivate func planPurge(_ account: String) throws -> PurgeReport {
        let found = try records(of: account)
        try requireNamed(account, found, start: try originSnapshot(try history.facts()))
        var report = PurgeReport(account: account, dryRun: true)
        report.recordsRemoved = found.log.count
        report.archivedRecordsRemoved = found.archived.count
        report.gaps = Self.ranges(of: Set(found.log + found.archived).sorted())
        report.snapshots = try snapshots.seqs()
        report.keysRemoved = try keyring.all().filter { $0.account.isSameName(as: account) }.count
        let name = Array(account.utf8)
        report.quarantineRemoved = try quarantine.all().filter { Self.quotes($0, account, name) }.count
        return report
    }

    /// Whether a quarantine entry belongs to `account`: its own account (given to ingest),
    /// or the account named anywhere in the payload as a JSON string, however escaped.
    private static func quotes(_ entry: QuarantinedPayload, _ account: String, _ name: [UInt8]) -> Bool {
        entry.account.map { $0.isSameName(as: account) } == true || JSONStrings.contains(entry.raw, name)
    }

    fileprivate func purgeAccount(_ account: String) throws -> PurgeReport {
        var report = PurgeReport(account: account)
        let history = try self.history.facts()
        let origin = try originSnapshot(history)
        let found = try records(of: account)
        try requireNamed(account, found, start: origin)
        // The rebuild starts from the origin snapshot without the account (or empty).
        var start = origin ?? Projection(configuration: options.projection)
        start.removeAccount(account)
        let archive = try self.archive()
        let (logSeqs, archivedSeqs) = (found.log, found.archived)
        // A digest index left by an older version holds the account's payload digests: it goes.
        try removeRetiredDigestIndex()
        report.gaps = Self.ranges(of: Set(logSeqs + archivedSeqs).sorted())
        let gaps = try auxiliary(.gaps)
        let snapshots = try auxiliary(.snapshots)
        let auditIndex = try self.auditIndex.existingDatabases()
        try environment.storeWrite { txn in
            // The account's audit index entries go with its records (the others' stay valid).
            try AuditIndex.remove(account: account, auditIndex, txn)
            for range in report.gaps {
                try txn.put(gaps, key: SeqKey(range.lowerBound).bytes, value: SeqKey(range.upperBound).bytes)
            }
            // Until the rebuild, only the base and origin snapshots may seed an open (they
            // still hold the account).
            for seq in try Self.snapshotSeqs(snapshots, txn) where seq != history.base && seq != history.origin {
                try txn.delete(snapshots, key: SeqKey(seq).bytes)
            }
        }
        for chunk in archivedSeqs.chunks(of: Self.compactionChunk) {
            report.archivedRecordsRemoved += try archive?.delete(chunk) ?? 0
        }
        for chunk in logSeqs.chunks(of: Self.compactionChunk) {
            report.recordsRemoved += try environment.storeWrite { txn in
                var deleted = 0
                for seq in chunk where try txn.delete(databases.log, key: SeqKey(seq).bytes) { deleted += 1 }
                return deleted
            }
        }
        report.snapshots = try rebuildSnapshots(from: start, history: history)
        (report.quarantineRemoved, report.keysRemoved) = try removeAuxiliaryEntries(naming: account)
        return report
    }

    /// Replays the history without the purged records and writes the origin and base
    /// snapshots (when compacted) and one at the high-water seq, replacing every other
    /// snapshot.
    private func rebuildSnapshots(from start: Projection, history: History) throws -> [UInt64] {
        var projection = start
        var atBase: Projection? = history.base == 0 ? nil : (history.base == history.origin ? start : nil)
        if history.base > 0, atBase == nil {
            try forEachHistoryBatch(after: history.origin, through: history.base) { projection.replay($0) }
            atBase = projection
            try forEachHistoryBatch(after: history.base) { projection.replay($0) }
        } else {
            try forEachHistoryBatch(after: history.origin) { projection.replay($0) }
        }
        let highWater = try self.history.bounds().highWaterSeq
        var written: [(UInt64, [UInt8])] = []
        if history.origin > 0 && history.origin < history.base {
            written.append((history.origin, SnapshotEnvelope(seq: history.origin, payload: start.snapshot()).encoded))
        }
        if let atBase { written.append((history.base, SnapshotEnvelope(seq: history.base, payload: atBase.snapshot()).encoded)) }
        if highWater > history.base || history.base == 0 {
            written.append((highWater, SnapshotEnvelope(seq: highWater, payload: projection.snapshot()).encoded))
        }
        let snapshots = try auxiliary(.snapshots)
        try environment.storeWrite { txn in
            try txn.removeAll(snapshots)
            for (seq, value) in written { try txn.put(snapshots, key: SeqKey(seq).bytes, value: value) }
        }
        return written.map(\.0)
    }

    /// Deletes quarantine entries whose stored bytes quote the account (`"account"`, as in a
    /// JSON payload) and Telegram keys recorded for it.
    private func removeAuxiliaryEntries(naming account: String) throws -> (quarantine: Int, keys: Int) {
        let name = Array(account.utf8)
        var removed = (quarantine: 0, keys: 0)
        if let quarantine = try existingAuxiliary(.quarantine) {
            removed.quarantine = try deleteEntries(quarantine) { value in
                // The entry's own account (given to ingest), or the account named anywhere in
                // the payload as a JSON string, however escaped. A damaged entry is matched
                // on its bytes as they are.
                guard let entry = value.withUnsafeBytes({ try? QuarantinedPayload(id: 0, bytes: $0) }) else {
                    return JSONStrings.contains(value, name)
                }
                return Self.quotes(entry, account, name)
            }
        }
        if let keys = try existingAuxiliary(.keys) {
            removed.keys = try deleteEntries(keys) { value in
                // A key entry: version u8, account string, key bytes, checksum.
                value.dropFirst().withUnsafeBytes { raw in
                    var reader = ByteReader(raw)
                    return (try? reader.string())?.isSameName(as: account) == true
                }
            }
        }
        return removed
    }

    private func deleteEntries(_ database: Database, where matches: ([UInt8]) -> Bool) throws -> Int {
        try environment.storeWrite { txn in
            var doomed: [[UInt8]] = []
            try txn.withCursor(database) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    if matches(Array(current.value)) { doomed.append(Array(current.key)) }
                    entry = try cursor.next()
                }
            }
            for key in doomed { try txn.delete(database, key: key) }
            return doomed.count
        }
    }

    /// Sorted seqs as maximal ranges of consecutive seqs.
    static func ranges(of seqs: [UInt64]) -> [ClosedRange<UInt64>] {
        var ranges: [ClosedRange<UInt64>] = []
        for seq in seqs {
            if let last = ranges.last, last.upperBound &+ 1 == seq {
                ranges[ranges.count - 1] = last.lowerBound...seq
            } else {
                ranges.append(seq...seq)
            }
        }
        return ranges
    }
}

extension Array {
    /// The array cut into consecutive slices of at most `size` elements.
    func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs as a contiguous run.
    fileprivate func contains(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
