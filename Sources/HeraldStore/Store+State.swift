import HeraldEvents
import Synchronization

extension Store {
    /// The in-memory side of a store, guarded by `Store.state`.
    struct State: ~Copyable {
        /// The seq of the last event applied.
        var lastSeq: UInt64 = 0
    }

    /// The seq of the last event appended (or, read-only, of the last one seen at open or
    /// at the last ``refresh()``).
    public var lastSeq: UInt64 { state.withLock { $0.lastSeq } }

    /// Brings the in-memory state up to the log on disk.
    func recover() throws {
        let last = try committedLastSeq()
        state.withLock { $0.lastSeq = last }
    }

    /// Applies committed records to the in-memory state. Called by the group leader, in seq
    /// order, right after the commit.
    func didCommit(_ records: some Sequence<PendingRecord>, recordedAt: Int64, firstSeq: UInt64) {
        state.withLock { state in
            var seq = firstSeq
            for _ in records { seq += 1 }
            state.lastSeq = seq - 1
        }
    }
}
