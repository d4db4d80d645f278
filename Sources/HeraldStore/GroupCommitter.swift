import Foundation

/// Group commit: concurrent appenders share one write transaction and its fsync.
///
/// Each caller queues its request and waits. The first waiter that finds no commit under
/// way becomes the leader: it takes everything queued, commits it in one transaction, hands
/// every request its result and wakes the others. A caller returns only when the transaction
/// holding its events has committed, so "returned" still means "durable".
final class GroupCommitter: @unchecked Sendable {
    // @unchecked: `queue` and `leaderActive` are only touched with `condition` locked;
    // a Request's `result` is written by the leader under the lock and read after it.
    private let condition = NSCondition()
    private var queue: [Request] = []
    private var leaderActive = false
    private var commitCount = 0
    /// How many requests the last commit carried: when producers run concurrently (it was
    /// more than one), a new leader waits briefly before committing, so fsyncs are shared.
    private var lastBatchSize = 1

    /// The longest a leader waits for more requests: about one fsync.
    static let gatherWindowNanoseconds: UInt64 = 150_000

    /// How many group commits (one transaction each) leaders have run; for tests.
    var commits: Int {
        condition.lock()
        defer { condition.unlock() }
        return commitCount
    }

    final class Request {
        let payload: [PendingRecord]
        /// Whether the caller wants each event's updates (else only the seqs).
        let wantsUpdates: Bool
        var result: Result<Committed, any Error>?
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
        condition.lock()
        queue.append(request)
        while request.result == nil {
            if leaderActive {
                condition.wait()
                continue
            }
            leaderActive = true
            if lastBatchSize > 1 && queue.count < lastBatchSize {
                // Let the producers that the last commit woke queue up again: yield the CPU
                // until as many are back as last time, or the window closes. (Yielding beats
                // a fixed sleep, whose timer slack can cost more than the fsync it saves.)
                let deadline = DispatchTime.now().uptimeNanoseconds + Self.gatherWindowNanoseconds
                while queue.count < lastBatchSize && DispatchTime.now().uptimeNanoseconds < deadline {
                    condition.unlock()
                    sched_yield()
                    condition.lock()
                }
            }
            let batch = queue
            lastBatchSize = batch.count
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            let outcome = Result { try commit(batch) }
            condition.lock()
            commitCount += 1
            switch outcome {
            case .success(let committed):
                for (item, result) in zip(batch, committed) { item.result = .success(result) }
            case .failure(let error):
                for item in batch { item.result = .failure(error) }
            }
            leaderActive = false
            condition.broadcast()
        }
        condition.unlock()
        return try request.result!.get()
    }
}
