import Dispatch
import HeraldProjection
import LMDB
import Logging
import Synchronization

extension Store {
    /// Whether snapshots may seed this store's state: they were taken without group-limit
    /// overrides, so a what-if configuration must replay instead.
    var snapshotsFitConfiguration: Bool {
        options.projection.groupCountMaxOverride == nil && options.projection.groupSizeMaxOverride == nil
    }

    /// Writes a snapshot of the state as of ``lastSeq`` now, in one commit, and prunes the
    /// snapshots beyond ``Options/snapshotsToKeep``; returns the seq it covers.
    ///
    /// The state is copied under the lock (a copy-on-write value, O(1)); it is encoded and
    /// written outside it, so appends go on meanwhile. An automatic snapshot in flight is
    /// finished first: snapshots are written one at a time. A store opened with group-limit
    /// overrides (whose state no plain open would rebuild) or without
    /// ``Options/replayOnOpen`` (which holds no state to write) throws
    /// ``StoreError/Code/snapshotUnavailable``.
    @discardableResult
    public func snapshot() throws -> UInt64 {
        try requireWritable()
        guard snapshotsFitConfiguration else {
            throw StoreError.snapshotUnavailable(path: path, reason: "it was opened with group-limit overrides")
        }
        guard state.withLock({ $0.holdsHistory }) else {
            throw StoreError.snapshotUnavailable(path: path, reason: "it was opened without replaying its history")
        }
        let seq = try snapshotWriter.writeNow { state.withLock { ($0.projection, $0.lastSeq) } }
        state.withLock { $0.lastSnapshotSeq = max($0.lastSnapshotSeq, seq) }
        return seq
    }

    /// The seqs of the snapshots in `database`, oldest first, inside the caller's transaction.
    static func snapshotSeqs(_ database: Database, _ txn: borrowing Transaction) throws -> [UInt64] {
        try txn.withCursor(database) { cursor in
            var seqs: [UInt64] = []
            var entry = try cursor.first()
            while let current = entry {
                if let key = SeqKey(bytes: current.key) { seqs.append(key.seq) }
                entry = try cursor.next()
            }
            return seqs
        }
    }

    /// Checks an envelope and restores its projection without copying the payload.
    static func decodeSnapshot(
        _ bytes: UnsafeRawBufferPointer, seq: UInt64, configuration: Projection.Configuration, onlyAccount: String? = nil,
        readingFormerFormats: Bool = false
    ) -> Result<Projection, SnapshotEnvelope.Damage> {
        do {
            let (_, payload) = try SnapshotEnvelope.check(bytes, expectedSeq: seq)
            // The envelope's CRC-32C covers the payload: its own checksum need not be computed.
            return .success(
                try restore(Projection.SnapshotAccounts(
                    snapshot: UnsafeRawBufferPointer(rebasing: bytes[payload]), configuration: configuration,
                    checksumVerified: true, onlyAccount: onlyAccount, readingFormerFormats: readingFormerFormats)))
        } catch let damage as SnapshotEnvelope.Damage {
            return .failure(damage)
        } catch {
            return .failure(.init(reason: "snapshot payload: \(error)"))
        }
    }

    /// Snapshots whose accounts take at least this many bytes decode them on two threads.
    static let twoThreadRestoreMinimum = 1 << 20

    /// Decodes a snapshot's accounts: on two threads at once, each taking about half of the
    /// bytes, when they take at least `minimumBytes`. Pays on a restart: one thread took 1.17×
    /// the wall time (same CPU) to open a 1 M-event store from its snapshot and a 10 k-event
    /// tail, in interleaved release runs on a quiet machine (2026-11-28). Of two errors, the
    /// earlier account's is thrown, as in one run.
    static func restore(
        _ accounts: Projection.SnapshotAccounts, twoThreadsFrom minimumBytes: Int = twoThreadRestoreMinimum
    ) throws(SnapshotError) -> Projection {
        guard let split = accounts.halfway(minimumBytes: minimumBytes) else {
            return accounts.projection([try accounts.decode(0..<accounts.count).get()])
        }
        let halves = [0..<split, split..<accounts.count]
        let decoded = Mutex<[Result<Projection.DecodedAccounts, SnapshotError>?]>([nil, nil])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let part = accounts.decode(halves[half])
            decoded.withLock { $0[half] = part }
        }
        let parts = decoded.withLock { $0 }
        return accounts.projection([try parts[0]!.get(), try parts[1]!.get()])
    }

}
