import Foundation
import HeraldProjection

extension Store {
    /// How many events a lone bulk request (``appendBatch(_:)``) must hold for its commit to
    /// be written on a second thread while the leader replays it: below it, the thread costs
    /// more than the overlap saves.
    static let replayAlongsideMinimum = 1_024

    /// Commits a lone request that wants no updates (a bulk load) on two cores: a new thread
    /// encodes, writes and syncs the records while the leader replays them into the projection,
    /// holding the state lock from before the replay until the commit's outcome is known.
    ///
    /// Readers therefore never see events that are not durable: they wait (for about one
    /// commit) and then see the batch applied. When the commit fails, the projection already
    /// holds the batch, and undoing a replay would mean copying the whole projection before
    /// every batch; instead, still under the lock, the state is rebuilt from the newest
    /// snapshot and the log as it now reads (without the batch, unless a failing sync left it
    /// committed after all): the cost falls on failures only.
    /// Followers of ``appliedEvents()`` need each event's updates, sent only once it is
    /// durable: with any, the leader waits for the commit and then applies as usual.
    func commitReplayingAlongside(_ request: GroupCommitter.Request, seqs: [UInt64]) throws -> GroupCommitter.Committed {
        let payload = request.payload
        let writing = Writing { [self] in try write([payload], seqs: seqs) }
        let thread = Thread { writing.run() }
        thread.name = "herald.commit"
        thread.start()
        return try state.withLock { state in
            guard followers.isEmpty else {
                try writing.outcome().get()
                return didCommit([request], seqs: seqs, to: &state)[0]
            }
            Self.replay(payload, seqs: seqs[...], into: &state.projection)
            do {
                try writing.outcome().get()
            } catch {
                restoreAfterFailedCommit(&state)
                throw error
            }
            state.lastSeq = seqs[seqs.count - 1]
            startSnapshotIfIntervalPassed(&state)
            return GroupCommitter.Committed(firstSeq: seqs[0], applied: [])
        }
    }

    /// After a commit failed with its batch already replayed: rebuilds the state from the
    /// snapshots and the log, as ``recover()`` does at open. If even that fails (the disk is
    /// failing), the state is left ahead of the log and the error logged: reopen the store.
    private func restoreAfterFailedCommit(_ state: inout State) {
        do {
            restore(try recoveredState(), to: &state)
        } catch {
            logger.critical(
                "after a failed commit, the in-memory state could not be rebuilt from the log; reopen the store",
                metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// A commit written on another thread, and its outcome for the thread that waits for it.
    private final class Writing: @unchecked Sendable {
        // @unchecked: `work` is set before the writing thread starts and touched only by it
        // after; `result` is written once, before `done` is signalled, and read only after
        // waiting on it.
        private let done = DispatchSemaphore(value: 0)
        /// The write. The writing thread releases it (and the store it captured) before it
        /// signals, so a store dropped right after its append closes at once, on the caller's
        /// thread, not later on this one.
        private var work: (@Sendable () throws -> Void)?
        private var result: Result<Void, any Error>?

        init(_ work: @escaping @Sendable () throws -> Void) {
            self.work = work
        }

        /// Runs the write and records its outcome; called once, on the writing thread.
        func run() {
            do {
                let write = work!
                work = nil
                result = Result { try write() }
            }
            done.signal()
        }

        /// Waits for the outcome; called once.
        func outcome() -> Result<Void, any Error> {
            done.wait()
            return result!
        }
    }
}
