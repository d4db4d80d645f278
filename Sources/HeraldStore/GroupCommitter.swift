import Foundation

/// Group commit: concurrent appenders share one write transaction and its fsync.
///
/// Each caller queues its request. The first caller that finds no commit under way becomes
/// the leader: it takes everything queued, commits it in one transaction, hands every request
/// its result and wakes exactly those callers, then hands leadership to the oldest request
/// still queued, if any. A caller returns only when the transaction holding its events has
/// committed, so "returned" still means "durable". Each request has its own semaphore, so a
/// commit wakes the callers it finished and the next leader, never the whole crowd.
final class GroupCommitter: @unchecked Sendable {
    // @unchecked: `queue`, `leaderActive`, `commitCount` and `lastBatchSize` are only touched
    // with `lock` held; a Request's `result` is written by the leader before it signals the
    // request's semaphore, and read by the caller after the wait returns.
    private let lock = NSLock()
    private var queue: [Request] = []
    private var leaderActive = false
    private var commitCount = 0
    /// How many requests the last commit carried: when producers run concurrently (it was
    /// more than one), a leader waits briefly before committing, so fsyncs are shared.
    private var lastBatchSize = 1

    /// How long a leader waits for more requests: about one fsync.
    static let gatherMicroseconds: UInt32 = 100

    /// How many group commits (one transaction each) leaders have run; for tests.
    var commits: Int {
        lock.lock()
        defer { lock.unlock() }
        return commitCount
    }

    final class Request {
        let payload: [PendingRecord]
        /// Whether the caller wants each event's updates (else only the seqs).
        let wantsUpdates: Bool
        var result: Result<Committed, any Error>?
        /// Signalled once: with `result` set, or (still `nil`) to make the caller the leader.
        let wakeUp = DispatchSemaphore(value: 0)

        init(_ payload: [PendingRecord], wantsUpdates: Bool) {
            self.payload = payload
            self.wantsUpdates = wantsUpdates
        }
    }

    /// What one request got: the seq of its first record and, when it asked, its records
    /// applied with their updates.
    struct Committed {
        var firstSeq: UInt64
        var applied: [Applied]
    }

    /// Commits `records` (in one transaction, possibly shared with other callers' records).
    /// `commit` runs on the leader's thread, one call at a time, with the requests in queue
    /// order; it returns what each request got.
    func submit(
        _ records: [PendingRecord], wantsUpdates: Bool, commit: ([Request]) throws -> [Committed]
    ) throws -> Committed {
        let request = Request(records, wantsUpdates: wantsUpdates)
        lock.lock()
        queue.append(request)
        let leads = !leaderActive
        leaderActive = true
        lock.unlock()
        if !leads { request.wakeUp.wait() }
        if let result = request.result { return try result.get() }
        lead(commit)
        return try request.result!.get()
    }

    /// Commits what is queued (the leader's own request among it), wakes the callers it
    /// finished, and passes leadership on.
    private func lead(_ commit: ([Request]) throws -> [Committed]) {
        lock.lock()
        if lastBatchSize > 1 && queue.count < lastBatchSize {
            // Let the other producers, woken by the last commit, queue up first.
            lock.unlock()
            usleep(Self.gatherMicroseconds)
            lock.lock()
        }
        let batch = queue
        queue.removeAll(keepingCapacity: true)
        lastBatchSize = batch.count
        lock.unlock()

        let outcome = Result { try commit(batch) }
        switch outcome {
        case .success(let committed):
            for (item, result) in zip(batch, committed) { item.result = .success(result) }
        case .failure(let error):
            for item in batch { item.result = .failure(error) }
        }

        lock.lock()
        commitCount += 1
        let next = queue.first
        if next == nil { leaderActive = false }
        lock.unlock()
        // The leader's own request is in `batch`: it returns by itself, so its semaphore is
        // never waited on; signalling it is harmless.
        for item in batch { item.wakeUp.signal() }
        next?.wakeUp.signal()
    }
}
