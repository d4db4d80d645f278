import Foundation
import HeraldProjection
import LMDB
import Logging
import Synchronization

/// Encodes and writes a store's snapshots, one at a time, on a serial queue: the automatic
/// ones in the background (see ``Store/Options/snapshotInterval``), so that no append waits
/// for them; those of `snapshot()` on their caller's thread, once the queue is free.
///
/// It holds what a write needs (the environment, the database handles, a few options), not
/// the store; ``Store/close()`` waits for the queue (``waitUntilIdle()``) before it releases
/// the environment.
final class SnapshotWriter: Sendable {
    private let queue = DispatchQueue(label: "herald.store.snapshots")
    /// Whether an automatic snapshot is queued or being written. While one is, no other
    /// starts, so the queue never holds more than one copy of the projection.
    private let inFlight = Atomic<Bool>(false)
    private let environment: Environment
    private let handles: Store.AuxiliaryHandles
    private let meta: Database
    private let path: String
    private let snapshotsToKeep: Int
    private let snapshotSpacing: UInt64
    private let logger: Logger
    private let automaticSnapshotFault: (@Sendable (UInt64) throws -> Void)?

    init(environment: Environment, handles: Store.AuxiliaryHandles, meta: Database, path: String, options: Store.Options) {
        self.environment = environment
        self.handles = handles
        self.meta = meta
        self.path = path
        self.snapshotsToKeep = options.snapshotsToKeep
        self.snapshotSpacing = options.snapshotSpacing
        self.logger = options.logger
        self.automaticSnapshotFault = options.automaticSnapshotFault
    }

    /// Queues `projection` (the state after `seq`) to be written in the background, unless an
    /// automatic snapshot is already in flight; returns whether it was queued. A failure is
    /// logged, never thrown: the events are durable and the next interval tries again.
    func startInBackground(_ projection: Projection, seq: UInt64) -> Bool {
        guard inFlight.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return false }
        queue.async { [self] in
            defer { self.inFlight.store(false, ordering: .releasing) }
            do {
                try self.automaticSnapshotFault?(seq)
                try self.write(projection, seq: seq)
            } catch {
                self.logger.warning("automatic snapshot failed", metadata: ["seq": "\(seq)", "error": "\(error)"])
            }
        }
        return true
    }

    /// Writes a snapshot on the caller's thread once no automatic one is in flight: `take`
    /// picks the state to write (projection and seq) at that moment. Returns the seq.
    func writeNow(_ take: () -> (Projection, UInt64)) throws -> UInt64 {
        try queue.sync {
            let (projection, seq) = take()
            try write(projection, seq: seq)
            return seq
        }
    }

    /// Returns once no automatic snapshot is in flight.
    func waitUntilIdle() {
        // A job on the queue waiting for the queue would wait forever.
        dispatchPrecondition(condition: .notOnQueue(queue))
        queue.sync {}
    }

    /// The snapshots of `seqs` (ascending) that pruning keeps for being spaced
    /// (``Store/Options/snapshotSpacing``): the oldest of each run of `spacing` seqs
    /// (`seq / spacing` equal) but the first run (a replay from seq 1 is as short). Once kept,
    /// a snapshot stays the oldest of its run, so the set only grows as snapshots are added.
    static func spaced(_ seqs: [UInt64], spacing: UInt64) -> Set<UInt64> {
        guard spacing > 0 else { return [] }
        var kept = Set<UInt64>()
        var run: UInt64?
        for seq in seqs where seq / spacing != run && seq >= spacing {
            run = seq / spacing
            kept.insert(seq)
        }
        return kept
    }

    /// Encodes `projection` (the state after `seq`) and stores it, pruning the snapshots
    /// beyond ``Store/Options/snapshotsToKeep`` but the compaction base, the start of the
    /// kept history and the spaced ones (``Store/Options/snapshotSpacing``), in one write
    /// transaction. Runs on the queue, one write at a time.
    private func write(_ projection: Projection, seq: UInt64) throws {
        let value = SnapshotEnvelope(seq: seq, payload: projection.snapshot()).encoded
        let database = try handles.open(.snapshots, create: true, in: environment)!
        try environment.storeWrite { txn in
            try txn.put(database, key: SeqKey(seq).bytes, value: value)
            let history = try Store.history(txn, meta: meta, path: path)
            let seqs = try Store.snapshotSeqs(database, txn)
            let spaced = Self.spaced(seqs, spacing: snapshotSpacing)
            for old in seqs.reversed().dropFirst(max(snapshotsToKeep, 1))
            where old != history.base && old != history.origin && !spaced.contains(old) {
                try txn.delete(database, key: SeqKey(old).bytes)
            }
        }
        logger.debug("wrote snapshot", metadata: ["seq": "\(seq)", "bytes": "\(value.count)"])
    }
}
