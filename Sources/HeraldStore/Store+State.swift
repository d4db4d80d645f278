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
        continuation.onTermination = { [followers] _ in followers.remove(id: id) }
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
