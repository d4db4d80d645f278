import Foundation
import HeraldStore
import NIOCore
import PostgresNIO

extension ReplicatedLog {
    /// The log's bounds in PostgreSQL: the last seq (the pruned-through seq when no record
    /// is left) and the first seq held.
    func remoteBounds() throws -> (first: UInt64?, last: UInt64, prunedThrough: UInt64) {
        let rows = try query(reader, "reading the log's bounds") {
            """
            SELECT coalesce((SELECT pruned_through FROM herald_logs WHERE log_id = \(self.logId)), 0),
                   (SELECT min(seq) FROM herald_records WHERE log_id = \(self.logId)),
                   (SELECT max(seq) FROM herald_records WHERE log_id = \(self.logId))
            """
        }
        let (pruned, first, last) = try rows[0].decode((Int64, Int64?, Int64?).self)
        return (first.map { UInt64($0) }, UInt64(last ?? pruned), UInt64(pruned))
    }

    /// The records with seq in `from...through`, at most ``pageSize``, in order.
    func remoteRecords(from: UInt64, through: UInt64 = UInt64(Int64.max)) throws -> [(seq: UInt64, bytes: [UInt8])] {
        let rows = try query(reader, "reading records") {
            """
            SELECT seq, record FROM herald_records WHERE log_id = \(self.logId) AND seq >= \(Int64(from)) AND seq <= \(Int64(min(through, UInt64(Int64.max))))
            ORDER BY seq LIMIT \(Self.pageSize)
            """
        }
        return try rows.map { row in
            let (seq, buffer) = try row.decode((Int64, ByteBuffer).self)
            return (UInt64(seq), Array(buffer.readableBytesView))
        }
    }

    /// Throws unless the store's records and PostgreSQL's are the same bytes at every seq
    /// both hold, and the store holds no seq past PostgreSQL's last (unless PostgreSQL holds
    /// nothing of this log: the store then seeds it). Reads only.
    func checkAgreement(_ store: Store) throws {
        let local = try store.history.bounds()
        let remote = try remoteBounds()
        guard local.lastSeqInLog > 0, let remoteFirst = remote.first else { return }
        if local.lastSeqInLog > remote.last {
            throw ReplicationError(
                .localAhead,
                "the store at \(store.path) holds seqs up to \(local.lastSeqInLog), past the last seq \(remote.last) of log id \(logId) in \(address); refusing to serve (nothing was changed); if this store belongs to another log, use another --log-id"
            )
        }
        var next = max(remoteFirst, local.firstReadableSeq)
        while next <= local.lastSeqInLog {
            let page = try remoteRecords(from: next, through: local.lastSeqInLog)
            guard let last = page.last else { break }
            let mine = try store.history.records(from: next, through: last.seq)
            var bySeq: [UInt64: [UInt8]] = [:]
            for record in mine { bySeq[record.seq] = record.encoded }
            for (seq, bytes) in page where bySeq[seq] != bytes {
                throw ReplicationError(
                    .disagreement,
                    "the store at \(store.path) and log id \(logId) in \(address) hold different records at seq \(seq) (the first that differs); refusing to serve, neither was changed"
                )
            }
            next = last.seq + 1
        }
    }

    /// A log id with nothing in PostgreSQL yet, opened by a leader whose store has records:
    /// the store's history becomes the log's start (`herald_logs.pruned_through` is set to
    /// the seq before the first the store can still read).
    func seedIfEmpty(_ store: Store) throws {
        let remote = try remoteBounds()
        let local = try store.history.bounds()
        guard remote.first == nil, remote.last == 0, local.lastSeqInLog > 0 else { return }
        let base = local.firstReadableSeq - 1
        if base > 0 {
            _ = try transaction(writer, "seeding the log") {
                "UPDATE herald_logs SET pruned_through = \(Int64(base)) WHERE log_id = \(self.logId) AND epoch = \(self.epoch)"
            }
        }
        var next = base + 1
        var seeded = 0
        while next <= local.lastSeqInLog {
            let records = try store.history.records(from: next, through: local.lastSeqInLog, limit: Self.pageSize)
            guard let last = records.last else { break }
            let seqs = records.map { Int64($0.seq) }
            let buffers = records.map { ByteBuffer(bytes: $0.encoded) }
            _ = try transaction(writer, "seeding the log") {
                """
                INSERT INTO herald_records (log_id, seq, epoch, record)
                SELECT \(self.logId), t.seq, \(self.epoch), t.record FROM unnest(\(seqs)::int8[], \(buffers)::bytea[]) AS t(seq, record)
                """
            }
            seeded += records.count
            next = last.seq + 1
        }
        logger.info("seeded the replicated log from the store", metadata: ["log_id": "\(logId)", "records": "\(seeded)"])
        // The store's service tables become the log's.
        seeding.withLock { $0 = true }
    }

    /// Applies the records PostgreSQL holds after the store's last to the store, in pages;
    /// returns how many.
    @discardableResult
    func catchUp(_ store: Store) throws -> Int {
        var applied = 0
        var lastReport = Date()
        while true {
            let last = try store.history.bounds().lastSeqInLog
            let page = try remoteRecords(from: last + 1)
            guard let first = page.first else { return applied }
            guard first.seq == last + 1 else {
                throw ReplicationError(
                    .disagreement,
                    "log id \(logId) in \(address) starts at seq \(first.seq) (earlier seqs were pruned), but the store at \(store.path) ends at \(last); restore a backup of this log covering seq \(last + 1) into the store first"
                )
            }
            try store.appendReplicated(page)
            applied += page.count
            if Date().timeIntervalSince(lastReport) > 2 {
                logger.info("catching up", metadata: ["log_id": "\(logId)", "seq": "\(page.last!.seq)"])
                lastReport = Date()
            }
        }
    }

    /// A follower's step: applies what was committed since, and records how far it got.
    func follow() {
        do {
            try listenIfNeeded()
            guard let store = storeSourceValue() else { return }
            try catchUp(store)
            let applied = Int64(try store.history.bounds().lastSeqInLog)
            _ = try query(reader, "recording the follower's progress") {
                """
                INSERT INTO herald_followers (log_id, node, applied_seq, seen_at) VALUES (\(self.logId), \(self.node), \(applied), now())
                ON CONFLICT (log_id, node) DO UPDATE SET applied_seq = EXCLUDED.applied_seq, seen_at = now()
                """
            }
        } catch {
            logger.warning("following failed; retrying", metadata: ["log_id": "\(logId)", "error": "\(error)"])
            reader.discard()
            listenState.withLock { $0 = false }
        }
    }

    // MARK: Service tables

    /// Every service entry kept with the log.
    public func loadServiceEntries() throws -> [ServiceEntry] {
        let rows = try query(reader, "reading the service tables") {
            "SELECT tbl, key, value FROM herald_service WHERE log_id = \(self.logId) ORDER BY tbl, key"
        }
        return try rows.map { row in
            let (table, key, value) = try row.decode((String, ByteBuffer, ByteBuffer).self)
            return ServiceEntry(table: table, key: String(buffer: key), value: Array(value.readableBytesView))
        }
    }

    /// Stores service entries (replacing) and removes keys, in one statement, while this
    /// node owns the log; what a leader's service tables write first. A follower keeps its
    /// tables locally only (they are replaced from the log's). Throws ``ReplicationError``.
    public func writeService(put entries: [ServiceEntry], remove removals: [(table: String, key: String)] = []) throws {
        guard role == .leader else { return }
        let (status, epoch) = (self.status, self.epoch)
        switch status {
        case .writable: break
        case .fenced(let reason): throw ReplicationError(.fenced, reason)
        case .recovering(let reason): throw ReplicationError(.unavailable, "the replicated log is unavailable: \(reason)")
        default: throw ReplicationError(.unavailable, "the replicated log is not open")
        }
        // Keys are bytes: an idempotency key's slot holds a NUL, which text cannot.
        let tables = entries.map(\.table), keys = entries.map { ByteBuffer(string: $0.key) }
        let values = entries.map { ByteBuffer(bytes: $0.value) }
        let removedTables = removals.map(\.table), removedKeys = removals.map { ByteBuffer(string: $0.key) }
        let result: (result: [PostgresRow], notices: [String])
        do {
            result = try writer.withLink { link in
                try link.transaction { link in try link.rows(
                    """
                    WITH owner AS (SELECT log_id FROM herald_logs WHERE log_id = \(logId) AND epoch = \(epoch) FOR SHARE),
                    del AS (
                        DELETE FROM herald_service s USING owner, unnest(\(removedTables)::text[], \(removedKeys)::bytea[]) AS r(tbl, key)
                        WHERE s.log_id = owner.log_id AND s.tbl = r.tbl AND s.key = r.key RETURNING 1),
                    ins AS (
                        INSERT INTO herald_service (log_id, tbl, key, value)
                        SELECT owner.log_id, t.tbl, t.key, t.value FROM owner, unnest(\(tables)::text[], \(keys)::bytea[], \(values)::bytea[]) AS t(tbl, key, value)
                        ON CONFLICT (log_id, tbl, key) DO UPDATE SET value = EXCLUDED.value RETURNING 1)
                    SELECT (SELECT count(*) FROM owner), (SELECT count(*) FROM del), (SELECT count(*) FROM ins)
                    """) }
            }
        } catch {
            writer.discard()
            throw ReplicationError(.unavailable, "the replicated log is unavailable: \(PostgresLink.reason(error))")
        }
        guard result.notices.isEmpty else {
            throw ReplicationError(.outcomeUnknown, "the service table write is not confirmed (a notice came with it); retry")
        }
        let counts = try result.result.first?.decode((Int64, Int64, Int64).self)
        let owned = counts?.0 ?? 0
        if owned == 0 {
            try checkOwnership(epoch: epoch)
        }
    }
}
