import Foundation
import HeraldEvents
import HeraldProjection
import Synchronization

extension Store {
    /// The in-memory side of a store, guarded by `Store.state`.
    struct State: ~Copyable {
        /// The projection of every event up to `lastSeq`.
        var projection: Projection
        /// The seq of the last event applied.
        var lastSeq: UInt64 = 0
        /// The seq of the newest snapshot written or started; the interval counts from it.
        var lastSnapshotSeq: UInt64 = 0
        /// Whether `projection` is the state of the whole history: false after an open
        /// without replay (``Options/replayOnOpen``) until a rebuild. Only then may a
        /// snapshot be taken of it, since opens trust snapshots over the log.
        var holdsHistory = true

        init(configuration: Projection.Configuration) {
            projection = Projection(configuration: configuration)
        }
    }

    /// ``State`` under a lock, shared by the store and its write path (``AppendEngine``).
    final class StateCell: Sendable {
        private let mutex: Mutex<State>

        init(_ state: consuming State) { mutex = Mutex(state) }

        /// Runs `body` with the state locked.
        func withLock<Result: ~Copyable, E: Error>(
            _ body: (inout sending State) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            try mutex.withLock(body)
        }
    }

    /// The seq of the last event applied (for a read-only store: seen at open or at the last
    /// ``refresh()``).
    public var lastSeq: UInt64 { state.withLock { $0.lastSeq } }

    /// The projection as of ``lastSeq``: a value, so it is a consistent snapshot that later
    /// appends do not change.
    public var projection: Projection { state.withLock { $0.projection } }

    /// One account's state: options, counts, chats and visible groups.
    public func account(_ name: String) -> AccountState? {
        state.withLock { $0.projection.account(name) }
    }

    /// The active-notifications view of an account (TDLib's `updateActiveNotifications`):
    /// what a client shows after a restart.
    public func activeNotifications(account: String) -> [VisibleGroup] {
        state.withLock { $0.projection.activeNotifications(account: account) }
    }

    /// A stream of every event applied from now on, with its updates, in seq order. The
    /// stream buffers without limit, so a slow reader never slows appends down. It does not
    /// keep the store alive: once the store is closed (``close()``) or released, the stream
    /// ends after the events it buffered. To resume after a restart, with a bounded buffer,
    /// use ``appliedEvents(after:bufferLimit:)``.
    public func appliedEvents() -> AsyncStream<Applied> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Applied>.makeStream(bufferingPolicy: .unbounded)
        // The handler must not take the state lock (see `Followers`).
        continuation.onTermination = { [weak self] _ in self?.followers.remove(id: id) }
        // Added with the state locked, between two commits: the follower gets every event of
        // the commits after it, and none of those before.
        // A closed store has nothing more to tell: the stream ends at once.
        state.withLock { _ in
            if isClosed { continuation.finish() } else { followers.add(continuation, id: id) }
        }
        return stream
    }

    /// Catches a read-only store up with what other processes committed since; returns the
    /// events applied. Concurrent calls apply each event once. On a writable store, which no
    /// other process can write to, it does nothing: its own appends apply their events.
    @discardableResult
    public func refresh() throws -> [Applied] {
        guard options.readOnly else { return [] }
        let from = lastSeq + 1
        var records: [LogRecord] = []
        try self.history.forEachLogRecord(from: from) { records.append($0); return true }
        return state.withLock { state in
            // Another refresh may have applied some of them since `from` was read.
            let unapplied = records.lazy.filter { [last = state.lastSeq] in $0.seq > last }
            let applied = AppendEngine.apply(unapplied.map { ($0.seq, $0.event) }, to: &state.projection)
            if let last = applied.last { state.lastSeq = last.seq }
            followers.yield(applied)
            return applied
        }
    }

    /// Builds the in-memory state at open: from the newest valid snapshot and the log after
    /// it, or (without usable snapshots) from the whole history: the archive and the log, or
    /// the compaction base's snapshot and the log when the archive does not hold it all.
    /// An unusable snapshot is skipped with a warning; only a damaged base snapshot with no
    /// archive to replay instead makes the open fail.
    func recover() throws {
        let recovered = try recoveredState()
        state.withLock { state in restore(recovered, to: &state) }
    }

    /// What ``recover()`` builds, before it replaces the in-memory state.
    struct Recovered {
        /// The projection of the history through ``lastSeq``.
        var projection: Projection
        /// The seq of the last event applied, or more (see ``HistoryBounds/highWaterSeq``).
        var lastSeq: UInt64
        /// The seq of the newest stored snapshot (or of the one the replay started from).
        var newestSnapshotSeq: UInt64
    }

    /// Builds the state of ``recover()`` from the store's snapshots and history, touching
    /// neither the in-memory state nor its lock.
    func recoveredState() throws -> Recovered {
        let history = try self.history.facts()
        let highWater = try self.history.bounds().highWaterSeq
        var projection = Projection(configuration: options.projection)
        var start: UInt64 = 0
        if options.useSnapshots && snapshotsFitConfiguration,
            let found = try newestValidSnapshot(in: history.base...max(history.base, highWater))
        {
            (start, projection) = found
        } else if !history.isComplete {
            if !snapshotsFitConfiguration {
                logger.warning("compacted store: the base snapshot was taken without the configured overrides")
            }
            switch try loadSnapshot(seq: history.origin) {
            case .success(let restored): (start, projection) = (history.origin, restored)
            case .failure(let damage):
                throw StoreError.damagedSnapshot(path: path, seq: history.origin, reason: damage.reason)
            }
        }
        var last = start
        try forEachHistoryBatch(after: start) { batch in
            projection.replay(batch)
            last = batch.lastSeq ?? last
        }
        projection.settleView()
        let newestSnapshot = max(start, try snapshots.seqs().last ?? 0)
        logger.debug("recovered", metadata: ["from": "\(start)", "through": "\(last)"])
        return Recovered(projection: projection, lastSeq: max(last, highWater), newestSnapshotSeq: newestSnapshot)
    }

    /// Replaces the in-memory state's projection and seqs with recovered ones (followers stay).
    func restore(_ recovered: Recovered, to state: inout State) {
        state.projection = recovered.projection
        state.holdsHistory = true
        state.lastSeq = recovered.lastSeq
        state.lastSnapshotSeq = max(state.lastSnapshotSeq, recovered.newestSnapshotSeq)
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
    /// this one is applied. (A caller so answered may release its store at once: the store's
    /// deinit waits for the threads, which hold this engine, never the store.)
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
        guard let last = seqs.last else { return }
        records.withUnsafeBufferPointer { records in
            projection.replay(ReplayBatch(lending: records, eventAt: PendingRecord.eventOffset, through: last, inHalves: Store.onTwoThreads))
        }
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
