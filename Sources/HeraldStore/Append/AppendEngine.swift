import Foundation
import HeraldEvents
import HeraldProjection
import LMDB

/// What the write path uses of a store: its environment and log, its in-memory state and
/// the followers and snapshot writer that state feeds. The threads hold this, not the
/// ``Store``, so that a store its users let go of is released and its deinit closes it.
/// It encodes and commits batches (`assignSeqs(_:after:)`, `write(_:)` in Store+Append.swift)
/// and applies them (below).
final class AppendEngine: Sendable {
    let path: String
    let options: Store.Options
    let environment: Environment
    /// The store's log database.
    let log: Database
    let state: Store.StateCell
    let followers: Followers
    let snapshotWriter: SnapshotWriter
    /// Whether automatic snapshots may be taken (see ``Store/snapshotsFitConfiguration``).
    let snapshotsFitConfiguration: Bool

    init(
        path: String, options: Store.Options, environment: Environment, log: Database, state: Store.StateCell,
        followers: Followers, snapshotWriter: SnapshotWriter, snapshotsFitConfiguration: Bool
    ) {
        self.path = path
        self.options = options
        self.environment = environment
        self.log = log
        self.state = state
        self.followers = followers
        self.snapshotWriter = snapshotWriter
        self.snapshotsFitConfiguration = snapshotsFitConfiguration
    }
}

extension AppendEngine {
    /// Applies a committed batch to the in-memory state, hands its events to the followers of
    /// ``Store/appliedEvents()``, starts a snapshot when the interval has passed, and answers
    /// the batch's requests. Runs on the apply thread (or on a caller that committed its own
    /// batch), batch after batch in seq order, each only once its commit is durable.
    ///
    /// Requests that want no updates (bulk loads) are answered as soon as the state is locked,
    /// before the batch is applied: their callers' reads of the state take this lock, so they
    /// still see their events, and a bulk loader prepares and commits its next batch while
    /// this one is applied.
    func apply(_ batch: CommittedBatch) {
        let committed = state.withLock { state in
            var first = batch.seqs.startIndex
            for request in batch.requests {
                if !request.wantsUpdates {
                    request.answer(.success(AppendRequest.Committed(firstSeq: batch.seqs[first], applied: [])))
                }
                first += request.records.count
            }
            let (committed, published) = apply(batch, to: &state)
            // Under the state lock, so that a follower added between two batches gets every
            // event of the later one and none of the earlier.
            followers.yield(published)
            startSnapshotIfIntervalPassed(&state)
            return committed
        }
        for (request, committed) in zip(batch.requests, committed) where request.wantsUpdates {
            request.answer(.success(committed))
        }
    }

    /// Replays committed records without computing their updates (nobody looks at them);
    /// `seqs` holds their seqs, in order.
    static func replay(_ records: [PendingRecord], seqs: ArraySlice<UInt64>, into projection: inout Projection) {
        for (record, seq) in zip(records, seqs) { projection.replay(record.event, seq: seq) }
        projection.settleView()
    }

    /// Applies the records of a committed batch to the projection, in seq order, without
    /// telling anyone: returns what each request gets and, when someone follows
    /// ``Store/appliedEvents()``, every event applied.
    private func apply(
        _ batch: CommittedBatch, to state: inout Store.State
    ) -> (committed: [AppendRequest.Committed], published: [Applied]) {
        let seqs = batch.seqs
        var committed: [AppendRequest.Committed] = []
        committed.reserveCapacity(batch.requests.count)
        var published: [Applied] = []
        let followed = !followers.isEmpty
        var index = 0
        for request in batch.requests {
            let range = index..<(index + request.records.count)
            index = range.upperBound
            if request.wantsUpdates || followed {
                let applied = Self.apply(zip(seqs[range], request.records.lazy.map { $0.event }), to: &state.projection)
                if followed { published.append(contentsOf: applied) }
                committed.append(.init(firstSeq: seqs[range.lowerBound], applied: request.wantsUpdates ? applied : []))
            } else {
                // Nobody looks at the updates: skip computing them.
                Self.replay(request.records, seqs: seqs[range], into: &state.projection)
                committed.append(.init(firstSeq: seqs[range.lowerBound], applied: []))
            }
        }
        if let last = seqs.last { state.lastSeq = last }
        return (committed, published)
    }

    /// Starts an automatic snapshot of the state (see ``Store/Options/snapshotInterval``) when
    /// the interval has passed since the last one and none is in flight; called after each
    /// batch is applied, with the state locked, so the snapshot holds exactly the events up to
    /// its seq. One that would start while another is in flight is taken at the first commit
    /// after that one ends.
    private func startSnapshotIfIntervalPassed(_ state: inout Store.State) {
        let interval = options.snapshotInterval
        if interval > 0, state.lastSeq - min(state.lastSnapshotSeq, state.lastSeq) >= interval, snapshotsFitConfiguration,
            state.holdsHistory, snapshotWriter.startInBackground(state.projection, seq: state.lastSeq)
        {
            state.lastSnapshotSeq = state.lastSeq
        }
    }

    /// Applies `events` to `projection`, in order, and returns them with their updates.
    static func apply(_ events: some Sequence<(UInt64, Event)>, to projection: inout Projection) -> [Applied] {
        var applied: [Applied] = []
        for (seq, event) in events {
            applied.append(Applied(seq: seq, event: event, updates: projection.apply(event, seq: seq).updates))
        }
        return applied
    }
}
