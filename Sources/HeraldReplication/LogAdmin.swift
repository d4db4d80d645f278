import Foundation
import HeraldStore
import NIOCore
import PostgresNIO

/// `herald log status` and `herald log prune`: reading and bounding a replicated log from
/// outside the nodes.
public enum LogAdmin {
    /// What `herald log status` reports.
    public struct Status: Sendable {
        public var logId: String
        public var database: String
        /// `nil` when no node ever owned the log id.
        public var owner: String?
        public var epoch: Int64
        /// Seconds since the owner's last heartbeat.
        public var ownerSilentSeconds: Double?
        public var firstSeq: UInt64?
        public var lastSeq: UInt64
        public var prunedThrough: UInt64
        public var followers: [Follower]

        public struct Follower: Sendable {
            public var node: String
            public var appliedSeq: UInt64
            /// `lastSeq - appliedSeq`.
            public var lag: UInt64
            public var silentSeconds: Double
        }
    }

    /// The status of `logId` in the database at `address`.
    public static func status(address: LogAddress, logId: String) throws -> Status {
        let link = try PostgresLink.connect(address)
        defer { link.close() }
        do {
            guard let version = try Schema.existingVersion(link) else {
                throw ReplicationError(.database, "the database \(address) holds no Herald replicated log (no herald_schema table)")
            }
            guard version <= Schema.version else {
                throw ReplicationError(
                    .schemaNewer, "the database \(address) holds Herald's replicated-log schema version \(version), newer than this binary's \(Schema.version); upgrade herald")
            }
            let owner = try link.rows(
                "SELECT owner, epoch, extract(epoch FROM now() - owner_seen_at)::float8, pruned_through FROM herald_logs WHERE log_id = \(logId)"
            ).first.map { try $0.decode((String, Int64, Double, Int64).self) }
            let bounds = try link.rows(
                "SELECT min(seq), max(seq) FROM herald_records WHERE log_id = \(logId)"
            )[0].decode((Int64?, Int64?).self)
            let pruned = UInt64(owner?.3 ?? 0)
            let last = bounds.1.map { UInt64($0) } ?? pruned
            let followers = try link.rows(
                "SELECT node, applied_seq, extract(epoch FROM now() - seen_at)::float8 FROM herald_followers WHERE log_id = \(logId) ORDER BY node"
            ).map { row in
                let (node, applied, silent) = try row.decode((String, Int64, Double).self)
                return Status.Follower(node: node, appliedSeq: UInt64(applied), lag: last - min(last, UInt64(applied)), silentSeconds: silent)
            }
            return Status(
                logId: logId, database: address.description, owner: owner?.0, epoch: owner?.1 ?? 0, ownerSilentSeconds: owner?.2,
                firstSeq: bounds.0.map { UInt64($0) }, lastSeq: last, prunedThrough: pruned, followers: followers)
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError(.database, "reading log id \(logId) in \(address): \(PostgresLink.reason(error))")
        }
    }

    /// What a prune removes (or removed).
    public struct PrunePlan: Sendable {
        public var logId: String
        public var through: UInt64
        /// How many records are (or were) deleted.
        public var records: Int
    }

    /// Deletes the records of `logId` with seq ≤ `through` from PostgreSQL, once `backup` (a
    /// store from `herald backup`, verified by the caller) covers `through`: it holds that
    /// seq, byte for byte as the log does. `dryRun`: only counts. Throws
    /// ``ReplicationError/Code/pruneRefused`` saying why.
    public static func prune(address: LogAddress, logId: String, through: UInt64, backup: Store, dryRun: Bool) throws -> PrunePlan {
        let link = try PostgresLink.connect(address)
        defer { link.close() }
        do {
            guard try Schema.existingVersion(link) != nil else {
                throw ReplicationError(.pruneRefused, "the database \(address) holds no Herald replicated log")
            }
            let backupLast = try backup.history.bounds().lastSeqInLog
            guard backupLast >= through else {
                throw ReplicationError(
                    .pruneRefused,
                    "refusing to prune log id \(logId) through seq \(through): the backup at \(backup.path) ends at seq \(backupLast); back up again first")
            }
            let remote = try link.rows(
                "SELECT record FROM herald_records WHERE log_id = \(logId) AND seq = \(Int64(through))"
            ).first.map { Array(try $0.decode(ByteBuffer.self).readableBytesView) }
            guard let remote else {
                throw ReplicationError(
                    .pruneRefused, "refusing to prune log id \(logId) through seq \(through): the log in \(address) holds no record \(through) (pruned already, or not written yet)")
            }
            guard let local = try backup.history.records(from: through, through: through).first, local.encoded == remote else {
                throw ReplicationError(
                    .pruneRefused,
                    "refusing to prune log id \(logId) through seq \(through): the backup at \(backup.path) holds a different record at seq \(through); it is not a backup of this log")
            }
            let count = try link.rows(
                "SELECT count(*) FROM herald_records WHERE log_id = \(logId) AND seq <= \(Int64(through))"
            )[0].decode(Int64.self)
            if !dryRun {
                _ = try link.transaction { link in
                    try link.rows(
                    """
                    WITH d AS (DELETE FROM herald_records WHERE log_id = \(logId) AND seq <= \(Int64(through)) RETURNING 1)
                    UPDATE herald_logs SET pruned_through = greatest(pruned_through, \(Int64(through))) WHERE log_id = \(logId)
                    """)
                }
            }
            return PrunePlan(logId: logId, through: through, records: Int(count))
        } catch let error as ReplicationError {
            throw error
        } catch let error as StoreError {
            throw error
        } catch {
            throw ReplicationError(.database, "pruning log id \(logId) in \(address): \(PostgresLink.reason(error))")
        }
    }
}
