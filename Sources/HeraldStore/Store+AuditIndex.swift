import HeraldEvents
import HeraldProjection
import LMDB

// The reads of the audit index (``AuditIndex``): audits and `projection(at:account:)` of one
// account, `verify`'s check of the index and a purge's removal of an account from it. Records
// are read through ``StoreHistory``.

extension AuditIndex {
    /// What `verify` finds wrong with the audit index: it is rebuilt in memory from the
    /// history through ``AuditIndex/through()`` and compared, entry by entry, with what is stored.
    /// Empty when there is no index.
    func problems() throws -> [VerifyReport.Problem] {
        let through = try self.through()
        guard through > 0, let targets = try databases.existing(.auditTargets), let seqsDatabase = try databases.existing(.auditSeqs) else {
            return []
        }
        var problems: [VerifyReport.Problem] = []
        let advice = "(derived data: audits replay instead of trusting it; `herald index --rebuild` rebuilds it)"
        guard try history.facts().isComplete else {
            return [.init(.auditIndex, seq: through, "an audit index is kept although the history before seq \(try history.facts().origin) is gone \(advice)")]
        }
        var projection = Projection(configuration: .init(recordsChanges: true))
        var tracker = AuditTargets()
        var entries = AuditIndexEntries()
        try history.forEach(from: 1, through: through) { record in
            entries.add(record, outcome: projection.apply(record.event, seq: record.seq), tracker: &tracker)
            return true
        }
        let (windows, seqs) = (entries.windows, entries.seqs)
        var stored = 0
        try history.environment.storeRead { txn in
            try txn.withCursor(targets) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    let key = Array(current.key)
                    if let windowsStored = Self.decodeBucket(key: key, value: current.value) {
                        var account: UInt64 = 0
                        var scope: UInt64 = 0
                        for i in 0..<8 { account = account << 8 | UInt64(key[i]) }
                        for i in 9..<17 { scope = scope << 8 | UInt64(key[i]) }
                        for window in windowsStored {
                            stored += 1
                            let expected = windows[AuditIndexKey(account: account, tag: key[8], scope: scope, id: window.id)]
                            if let expected, expected != (window.first, window.last) {
                                problems.append(.init(.auditIndex, seq: window.first, "target window \(window.first)…\(window.last) should be \(expected.first)…\(expected.last) \(advice)"))
                            } else if expected == nil {
                                problems.append(.init(.auditIndex, seq: window.first, "a target window \(window.first)…\(window.last) that no event gives \(advice)"))
                            }
                        }
                    } else {
                        problems.append(.init(.auditIndex, seq: 0, "a damaged bucket of target windows (checksum, length or order) \(advice)"))
                    }
                    entry = try cursor.next()
                }
            }
        }
        if stored < windows.count {
            problems.append(.init(.auditIndex, seq: through, "\(windows.count - stored) target window\(windows.count - stored == 1 ? " is" : "s are") missing \(advice)"))
        }
        for (account, expected) in seqs.sorted(by: { $0.key < $1.key }) {
            let found = try self.seqs(of: account.name, after: 0, through: through)
            if found != expected {
                let seq = zip(found ?? [], expected).first { $0 != $1 }?.1 ?? expected[min((found ?? []).count, expected.count - 1)]
                problems.append(.init(
                    .auditIndex, seq: seq,
                    found == nil ? "account \(account.name)'s seq chunks are damaged or do not link up \(advice)"
                        : "account \(account.name)'s seqs differ from the log's from seq \(seq) on \(advice)"))
            }
        }
        let chunks = try history.environment.storeRead { txn in try txn.count(seqsDatabase) }
        if seqs.isEmpty && chunks > 0 {
            problems.append(.init(.auditIndex, seq: through, "\(chunks) seq chunk\(chunks == 1 ? "" : "s") of accounts no record names \(advice)"))
        }
        return problems
    }

    /// Removes `account`'s entries from the audit index inside a purge's transaction (the
    /// other accounts' stay valid: accounts never influence each other). Entries of another
    /// account whose name has the same 64-bit hash go too; its audits then replay its history.
    /// `databases` are the index's existing databases (``existingDatabases()``, opened
    /// before the transaction).
    static func remove(account: String, _ databases: [Database], _ txn: borrowing Transaction) throws {
        let hash = accountHash(account)
        for database in databases {
            let keys: [[UInt8]] = try txn.withCursor(database) { cursor in
                var keys: [[UInt8]] = []
                var entry = try cursor.seek(atLeast: Self.seqsKey(accountHash: hash, first: 0))
                while let current = entry, current.key.count >= 8, Self.hashPrefix(current.key) == hash {
                    keys.append(Array(current.key))
                    entry = try cursor.next()
                }
                return keys
            }
            for key in keys { _ = try txn.delete(database, key: key) }
        }
    }

    /// The audit index's databases that exist.
    func existingDatabases() throws -> [Database] {
        [try databases.existing(.auditTargets), try databases.existing(.auditSeqs)].compactMap { $0 }
    }

    /// Whether the index covers the whole log and may answer for this store.
    private func isCurrent() throws -> Bool {
        guard history.options.usesAuditIndex, try applies else { return false }
        let through = try self.through()
        let last = try history.bounds().highWaterSeq
        return through > 0 && through >= last
    }

    /// The first and last seq that changed `target` of `account`, from the index; `nil`
    /// when the index has no sound entry for it.
    func window(account: String, target: AuditTrail.Target) throws -> (first: UInt64, last: UInt64)? {
        guard let database = try databases.existing(.auditTargets) else { return nil }
        let slot = Self.slot(account: Self.accountHash(account), AuditTargets.Key(target))
        let key = Self.bucketKey(slot)
        return try history.environment.storeRead { txn in
            try key.withUnsafeBytes { bytes in
                guard let value = try txn.get(database, key: bytes),
                    let entry = Self.decodeBucket(key: key, value: value)?.first(where: { $0.id == slot.id })
                else { return nil }
                return (entry.first, entry.last)
            }
        }
    }

    /// `account`'s seqs in `after+1...through`, from the index; `nil` when its chunks are
    /// damaged or do not link up (a lost chunk), so that the caller replays instead.
    func seqs(of account: String, after: UInt64, through: UInt64) throws -> [UInt64]? {
        guard let database = try databases.existing(.auditSeqs) else { return nil }
        let hash = Self.accountHash(account)
        let name = Array(account.utf8)
        return try history.environment.storeRead { txn -> [UInt64]? in
            try txn.withCursor(database) { cursor -> [UInt64]? in
                var found: [UInt64] = []
                var previousLast: UInt64 = 0
                var entry = try cursor.seek(atLeast: Self.seqsKey(accountHash: hash, first: 0))
                while let current = entry, current.key.count == 16, Self.hashPrefix(current.key) == hash {
                    guard let chunk = Self.decodeChunk(key: current.key, value: current.value) else { return nil }
                    if chunk.account == name {
                        guard chunk.previousLast == previousLast else { return nil }
                        previousLast = chunk.seqs[chunk.seqs.count - 1]
                        if previousLast > after {
                            for seq in chunk.seqs where seq > after && seq <= through { found.append(seq) }
                        }
                        if chunk.seqs[0] > through { break }
                    }
                    entry = try cursor.next()
                }
                return found
            }
        }
    }

    /// ``auditReport(account:target:listingUnchanged:)`` without `listingUnchanged`, from the
    /// index, the same report a replay gives: the newest snapshot before the first seq that
    /// changed the target, restored for `account` alone, then only the account's events up to
    /// the last seq that changed it. `nil` when the index cannot
    /// answer (none, behind the log, no entry for the target, damaged, or a snapshot that
    /// already holds the target), so that the caller replays.
    package func report(account: String, target: AuditTrail.Target) throws -> Store.AuditReport? {
        guard try isCurrent(), let window = try window(account: account, target: target) else { return nil }
        let configuration = Projection.Configuration(recordsChanges: true)
        var start: UInt64 = 0
        var projection = Projection(configuration: configuration)
        if let found = try history.newestValidSnapshot(in: 0...(window.first - 1), configuration: configuration, onlyAccount: account) {
            (start, projection) = found
            history.environment.releaseMappedPages()  // the snapshot's pages, read once for its checksum
        }
        guard let seqs = try self.seqs(of: account, after: start, through: window.last), seqs.last == window.last else { return nil }
        var fold = AuditFold(account: account, target: target, startingFrom: projection, at: 0)
        // The target did not exist before its first change: were it in the snapshot, the
        // trail would start from it, which the replay from seq 1 does not.
        guard fold.trail.atBase.isEmpty else { return nil }
        let matched = try history.forEach(seqs: seqs, account: account) { fold.add($0) }
        guard matched, !fold.trail.entries.isEmpty else { return nil }
        return fold.report(baseSeq: 0, listingUnchanged: false)
    }

    /// ``Store/projection(at:account:useSnapshots:)`` from the index: the newest snapshot at or
    /// before `seq` restored for `account` alone, then the account's events after it. `nil`
    /// when the index cannot answer.
    func projection(at seq: UInt64, account: String) throws -> Projection? {
        guard try isCurrent() else { return nil }
        let configuration = history.options.projection
        var start: UInt64 = 0
        var projection = Projection(configuration: configuration)
        if let found = try history.newestValidSnapshot(in: 0...seq, configuration: configuration, onlyAccount: account) {
            (start, projection) = found
            history.environment.releaseMappedPages()  // the snapshot's pages, read once for its checksum
        }
        guard let seqs = try self.seqs(of: account, after: start, through: seq) else { return nil }
        let matched = try history.forEach(seqs: seqs, account: account) { record in
            projection.replay(record.event, seq: record.seq)
        }
        guard matched else { return nil }
        // Its seq is the full replay's: the last record at or before `seq`, of any account.
        if let last = try history.lastRecordSeq(atOrBelow: seq), last > start { projection.advance(to: last) }
        projection.settleView()
        return projection
    }
}

// The reads of records by seq the audit index answers with.
extension StoreHistory {
    /// Records read by ``forEach(seqs:account:_:)`` between releases of the mapped pages.
    static let releaseEvery = 512

    /// Calls `body` with the record of each of `seqs` (ascending), read from the archive or
    /// the log, checked and decoded; returns false (having called `body` for some) when one is
    /// missing or is not an event of `account`: the index does not match the log.
    func forEach(seqs: [UInt64], account: String, _ body: (LogRecord) throws -> Void) throws -> Bool {
        let name = Array(account.utf8)
        let base = try facts().base
        func visit(_ seq: UInt64, _ bytes: UnsafeRawBufferPointer?, _ location: String) throws -> Bool {
            guard let bytes else { return false }
            do {
                guard try LogRecord.isEvent(of: name, bytes) else { return false }
            } catch let damage as LogRecord.Damage {
                throw StoreError.damagedRecord(path: location, seq: seq, reason: damage.reason)
            }
            try body(try Store.decodeRecord(seq: seq, bytes: bytes, in: location))
            visited()
            return true
        }
        let split = seqs.partitioningIndex { $0 > base }
        // Scattered records of a large file: every fault maps up to 64 KiB around the record,
        // so the mapped pages are let go now and then (they stay in the page cache).
        var read = 0
        func visited() {
            read += 1
            if read % Self.releaseEvery == 0 { environment.releaseMappedPages() }
        }
        if split > 0 {
            guard let archive = try archive() else { return false }
            let matched = try archive.environment.storeRead { txn in
                for seq in seqs[..<split] {
                    let found = try SeqKey(seq).withBytes { key in try txn.get(archive.log, key: key).map { try visit(seq, $0, archive.path) } }
                    guard found == true else { return false }
                }
                return true
            }
            guard matched else { return false }
        }
        return try environment.storeRead { txn in
            for seq in seqs[split...] {
                let found = try SeqKey(seq).withBytes { key in try txn.get(log, key: key).map { try visit(seq, $0, path) } }
                guard found == true else { return false }
            }
            return true
        }
    }

    /// The seq of the last record (log or archive) at or before `seq`; `nil` when none.
    func lastRecordSeq(atOrBelow seq: UInt64) throws -> UInt64? {
        if let inLog = try Self.lastKey(atOrBelow: seq, of: log, in: environment) { return inLog }
        guard let archive = try archive() else { return nil }
        return try Self.lastKey(atOrBelow: seq, of: archive.log, in: archive.environment)
    }

    /// The last seq key at or before `seq` in `database`.
    private static func lastKey(atOrBelow seq: UInt64, of database: Database, in environment: Environment) throws -> UInt64? {
        try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                // The entry before the first key above `seq`, or the last one when none is above.
                let above = seq == .max ? nil : try cursor.seek(atLeast: SeqKey(seq + 1).bytes)
                let entry = above == nil ? try cursor.last() : try cursor.previous()
                return entry.flatMap { SeqKey(bytes: $0.key)?.seq }.flatMap { $0 <= seq ? $0 : nil }
            }
        }
    }
}

/// The entries of the audit index for a run of records, as catching up writes them and
/// `verify` rebuilds them: each target's window and each account's seqs.
struct AuditIndexEntries {
    var windows: [AuditIndexKey: (first: UInt64, last: UInt64)] = [:]
    var seqs: [NameKey: [UInt64]] = [:]
    private var keys = Set<AuditTargets.Key>()

    /// Adds `record`, whose event had `outcome`, `tracker` following the history.
    mutating func add(_ record: LogRecord, outcome: Outcome, tracker: inout AuditTargets) {
        keys.removeAll(keepingCapacity: true)
        tracker.record(record.event, outcome: outcome, into: &keys)
        let account = AuditIndex.accountHash(record.event.account)
        for key in keys {
            let slot = AuditIndex.slot(account: account, key)
            windows[slot] = (windows[slot]?.first ?? record.seq, record.seq)
        }
        seqs[NameKey(record.event.account), default: []].append(record.seq)
    }
}

/// Where one target's window lives (``AuditIndex/slot(account:_:)``): its bucket is all but
/// the low ``AuditIndex/bucketShift`` bits of `id`. Ordered as the bucket keys' bytes, then
/// by id.
struct AuditIndexKey: Hashable, Comparable {
    var account: UInt64
    var tag: UInt8
    var scope: UInt64
    var id: UInt64

    func sameBucket(as other: Self) -> Bool {
        account == other.account && tag == other.tag && scope == other.scope
            && id >> AuditIndex.bucketShift == other.id >> AuditIndex.bucketShift
    }

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.account, lhs.tag, lhs.scope, lhs.id) < (rhs.account, rhs.tag, rhs.scope, rhs.id) }
}

extension Collection {
    /// The index of the first element for which `belongs` is true, the elements being
    /// partitioned (all false, then all true).
    func partitioningIndex(where belongs: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try belongs(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
