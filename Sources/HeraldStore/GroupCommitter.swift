import Foundation

/// Group commit: concurrent appenders share one write transaction and its fsync.
///
/// Each caller queues its request. The first caller that finds no commit under way becomes
/// the leader: it takes everything queued, commits it in one transaction, hands every request
/// its result and wakes exactly its caller, then hands leadership to the oldest request
/// queued meanwhile, if any. A caller returns only when the transaction holding its events
/// has committed, so "returned" still means "durable".
///
/// Each request has its own semaphore (a futex on Linux): a commit wakes the callers it
/// finished and the next leader, each directly, and a woken caller takes no lock to read its
/// result, so the callers of one batch do not queue up behind a shared mutex on their way out.
final class GroupCommitter: @unchecked Sendable {
    // @unchecked: `queue`, `leaderActive`, `commitCount` and `lastBatchSize` are only touched
    // with `lock` held; `lastCommitFailed` only by the leader, and leadership passes under
    // the lock or through a request's semaphore; a Request's `result` is written by the
    // leader before it signals the request's semaphore, and read by the caller after its
    // wait returns (or by the leader, for its own request, on its own thread).
    private let lock = NSLock()
    private var queue: [Request] = []
    private var leaderActive = false
    private var commitCount = 0
    /// How many requests the last commit carried: when producers run concurrently (it was
    /// more than one), a new leader waits briefly before committing, so fsyncs are shared.
    private var lastBatchSize = 1
    /// Whether the last commit failed. The next batch is then not run aside (see
    /// ``runAside(in:_:)``): work done ahead of a commit that fails must be undone, and a run
    /// of failures (a full disk) should not pay for that at every commit. Only leaders touch
    /// it, one at a time.
    private var lastCommitFailed = false

    /// The longest a leader waits for more requests: about one fsync.
    static let gatherWindowNanoseconds: UInt64 = 150_000

    /// How many group commits (one transaction each) leaders have run; for tests.
    var commits: Int {
        lock.lock()
        defer { lock.unlock() }
        return commitCount
    }

    /// One caller's records, waiting for a commit.
    final class Request {
        let payload: [PendingRecord]
        /// Whether the caller wants each event's updates (else only the seqs).
        let wantsUpdates: Bool
        /// Set once, by the leader, before it signals `wakeUp`.
        fileprivate var result: Result<Committed, any Error>?
        /// Work the leader hands this waiting caller's thread (see ``runAside(in:_:)``), set
        /// before it signals `wakeUp`.
        fileprivate var asideWork: (() -> Void)?
        /// Signalled once per reason to wake: `result` set, `asideWork` to run, or (neither)
        /// to make the caller the leader.
        fileprivate let wakeUp = DispatchSemaphore(value: 0)

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
    /// order; it returns what each request got, or why that request alone failed, or throws
    /// when the whole batch failed, and may hand part of its work to another caller of the
    /// batch with ``runAside(in:_:)``.
    func submit(
        _ records: [PendingRecord], wantsUpdates: Bool,
        commit: ([Request]) throws -> [Result<Committed, any Error>]
    ) throws -> Committed {
        let request = Request(records, wantsUpdates: wantsUpdates)
        lock.lock()
        queue.append(request)
        let leads = !leaderActive
        leaderActive = true
        lock.unlock()
        if !leads {
            request.wakeUp.wait()
            if let work = request.asideWork {
                request.asideWork = nil
                work()
                request.wakeUp.wait()
            }
            if let result = request.result { return try result.get() }
            // Woken without a result: the last leader handed over; this request is queued.
        }
        lead(commit)
        return try request.result!.get()
    }

    /// Runs `work` on the thread of a caller of `batch` other than the leader, which waits
    /// for its commit anyway, so that the leader can go on with the commit meanwhile. Returns
    /// `false`, running nothing, when the leader's request is alone in `batch` or the last
    /// commit failed.
    ///
    /// Call it from `commit`, at most once per batch; `commit` must not return before
    /// `work` has finished, since the caller that runs it then waits for its result.
    func runAside(in batch: [Request], _ work: @escaping () -> Void) -> Bool {
        // The leader's request is `batch[0]` (see `lead`). The newest request's caller queued
        // last, so it has most likely not gone to sleep yet: handing it the work costs no
        // wakeup.
        guard !lastCommitFailed, batch.count > 1, let helper = batch.last else { return false }
        helper.asideWork = work
        helper.wakeUp.signal()
        return true
    }

    /// Commits what is queued (the leader's own request among it), wakes the callers it
    /// finished, and passes leadership to the oldest request queued meanwhile.
    private func lead(_ commit: ([Request]) throws -> [Result<Committed, any Error>]) {
        lock.lock()
        if lastBatchSize > 1 && queue.count < lastBatchSize {
            // Let the producers that the last commit woke queue up again: yield the CPU
            // until as many are back as last time, or the window closes. (Yielding beats
            // a fixed sleep, whose timer slack can cost more than the fsync it saves.)
            let deadline = DispatchTime.now().uptimeNanoseconds + Self.gatherWindowNanoseconds
            while queue.count < lastBatchSize && DispatchTime.now().uptimeNanoseconds < deadline {
                lock.unlock()
                sched_yield()
                lock.lock()
            }
        }
        let batch = queue
        lastBatchSize = batch.count
        queue.removeAll(keepingCapacity: true)
        lock.unlock()

        switch Result(catching: { try commit(batch) }) {
        case .success(let outcomes):
            for (item, outcome) in zip(batch, outcomes) { item.result = outcome }
            lastCommitFailed = false
        case .failure(let error):
            for item in batch { item.result = .failure(error) }
            lastCommitFailed = true
        }

        lock.lock()
        commitCount += 1
        let next = queue.first
        if next == nil { leaderActive = false }
        lock.unlock()
        // The leader's own request is `batch[0]`: a caller leads either because it found the
        // queue empty (no leader, hence nothing queued) or because it was first in it. Its
        // caller returns without waiting.
        for item in batch.dropFirst() { item.wakeUp.signal() }
        next?.wakeUp.signal()
    }
}
