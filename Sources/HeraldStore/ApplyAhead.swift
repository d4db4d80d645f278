import Foundation

/// The meeting point of a group commit's leader and the caller that applies its batch to the
/// projection while the leader writes and syncs it.
///
/// The applier takes the state lock, applies the batch, hands over what each request gets
/// and waits, still holding the lock, for the verdict: readers never see a projection ahead
/// of the log, and a caller that reads the state after its append returned waits until the
/// applier is done, so it sees its own event. When the commit is durable the applier
/// publishes the events to followers; when it failed, the applier only lets go of the lock,
/// and the leader rebuilds the state from the log.
final class ApplyAhead: @unchecked Sendable {
    // @unchecked: `committed` is written by the applier before it signals `applied`, and read
    // by the leader after waiting on it; `durable` is written by the leader before it signals
    // `verdict`, and read by the applier after waiting on it.
    private let applied = DispatchSemaphore(value: 0)
    private let verdict = DispatchSemaphore(value: 0)
    private var durable = false
    private var committed: [GroupCommitter.Committed] = []

    /// Called by the applier, holding the state lock, with the batch applied: hands over what
    /// each request gets, waits for the leader's verdict and returns whether the commit is
    /// durable.
    func awaitVerdict(_ committed: [GroupCommitter.Committed]) -> Bool {
        self.committed = committed
        applied.signal()
        verdict.wait()
        return durable
    }

    /// Called by the leader once the commit returned or failed: tells the applier and, once
    /// the batch is applied, returns what each request gets (meaningless when not `durable`).
    @discardableResult
    func settle(durable: Bool) -> [GroupCommitter.Committed] {
        self.durable = durable
        verdict.signal()
        applied.wait()
        return committed
    }
}
