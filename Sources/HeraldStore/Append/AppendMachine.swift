/// The decisions of a store's write path, without threads or I/O: who commits the queued
/// requests and who applies each committed batch (the ``Route``), when the commit thread
/// gathers, and which requests fail when the store closes.
///
/// A value type whose state is two stages and two queues, in the manner of swift-nio's
/// `NIOAsyncWriter.StateMachine`: events (`mutating func`s) move the stages and return what
/// to do; ``AppendThreads`` keeps it under one lock and carries that out. It never says whom
/// to wake: after each event a waiting thread is signalled when
/// ``commitThreadHasWork``/``applyThreadHasWork`` says it would now act, and a thread that
/// wakes asks again, so a wake-up is never owed or left over. Generic over what it moves, so
/// its tests use plain values.
///
/// The pipeline has two stages. A commit takes everything queued as one batch, writes it in
/// one transaction and syncs it; the batch is then applied to the projection and its requests
/// answered. While batch N is applied, batch N+1 commits; committed batches wait for the apply
/// thread in order, at most ``committedLimit`` of them (no commit starts while that many
/// wait), so the projection is a few batches behind the log at most, and never ahead of it:
/// nothing is applied before its commit succeeded, and a failed commit applies nothing.
struct AppendMachine<Request, Batch> {
    /// Who holds the commit stage.
    enum CommitStage: Equatable {
        /// Nobody commits: the commit thread waits for requests.
        case idle
        /// The commit thread's next commit waits until as many requests are queued as the
        /// last commit carried, or its window closes: their callers are coming back.
        case gathering
        /// `by` writes a batch of `size` requests.
        case committing(by: Committer, size: Int)
    }

    /// Who writes a batch.
    enum Committer: Equatable {
        case commitThread
        /// A blocking caller, on its own thread.
        case caller
    }

    /// Who holds the apply stage.
    enum ApplyStage: Equatable {
        case idle
        case applying(by: Applier)
    }

    /// Who applies a batch.
    enum Applier: Equatable {
        case applyThread
        /// Whoever committed it (a caller or the commit thread), on its own thread.
        case committer
    }

    /// Who commits a batch and who applies it. A blocking caller commits its own request when
    /// ``enqueue(_:callerMayCommit:)`` says ``EnqueueAction/commitHere``; everything else is
    /// queued for the commit thread. Once the batch is durable, ``route(committedBy:mayApply:)``
    /// picks who applies it. Each route is kept for the row it pays for: `herald-bench` release
    /// builds, with the route turned off against on, 7 interleaved pairs, median of the
    /// whole-process wall-time ratios (2026-11-28, the shared 2-core machine, whose fsync
    /// latency moved 3× during the runs):
    enum Route: Equatable {
        /// A lone synchronous caller that wants updates (nobody commits, nothing is queued or
        /// applied, the last commit carried one request at most) commits, applies and answers
        /// itself: no hand-off, no wake. "One durable event per call, 1 producer" (`producers 1 1500`) is 1.17×
        /// slower without it (CPU 1.32×).
        case callerCommitsAndApplies
        /// The commit thread applies its batch itself when nothing else is applied, waits to
        /// be or is queued, then gathers the callers it has answered: one wake less per group
        /// commit. "8 concurrent producers, each call durable" (`producers 8 500`) is 1.14×
        /// slower without it. (Without the gather: 1.40×, CPU 1.57×, 4.0 events per commit
        /// instead of 7.9.)
        case commitThreadCommitsAndApplies
        /// The pipeline: async callers, callers inside a transaction, bulk batches
        /// (`appendBatch`) and callers that came while a commit ran are committed by the
        /// commit thread and applied by the apply thread, commit N+1 overlapping apply N (a
        /// bulk caller, answered once its batch holds the state lock, prepares its next batch
        /// meanwhile). A fourth route, a caller committing and the apply thread applying, was
        /// deleted: "batched append" (`populate --events 100000`) was 1.06× slower without it,
        /// within the noise.
        case commitThreadCommitsApplyThreadApplies

        /// Whether the committer applies the batch itself.
        var appliesHere: Bool { self == .callerCommitsAndApplies || self == .commitThreadCommitsAndApplies }
    }

    private(set) var commitStage = CommitStage.idle
    private(set) var applyStage = ApplyStage.idle
    /// Requests waiting for the next commit, oldest first.
    private var queued: [Request] = []
    /// Committed batches waiting for the apply thread, oldest first.
    private var handedOff: [Batch] = []
    /// How many requests the last successful commit carried (0 after a failed one: its
    /// callers need not come back).
    private var lastCommitSize = 0
    /// Whether the store was closed: requests are refused, and the threads stop once the
    /// batches in flight are applied.
    private(set) var isClosed = false
    /// How many commits ended, successful or not.
    private(set) var commitCount = 0

    /// How many committed batches may wait for the apply thread. More than one, so that the
    /// commit thread goes on with the next commit while the apply thread is still waking up.
    static var committedLimit: Int { 4 }
    private var hasRoomToCommit: Bool { handedOff.count < Self.committedLimit }
    /// How many requests wait for the next commit.
    var waitingCount: Int { queued.count }

    init() {}

    /// What to do after ``enqueue(_:callerMayCommit:)``.
    enum EnqueueAction: Equatable {
        /// The request waits for the commit thread.
        case queued
        /// The store is closed: fail the request with the closed error.
        case refuse
        /// The caller writes its request itself, in one transaction, then reports
        /// ``committed(_:mayApply:)`` (and applies it: nothing else can be applied meanwhile)
        /// or ``commitFailed()``. The request was not queued.
        case commitHere
    }

    /// A caller's request arrives; `callerMayCommit` when the caller may block on its own
    /// commit and apply (a synchronous append that wants updates, not an `async` one, nor one
    /// inside a transaction).
    mutating func enqueue(_ request: Request, callerMayCommit: Bool = false) -> EnqueueAction {
        guard !isClosed else { return .refuse }
        // Not after a commit of several requests: their callers are coming back, and the
        // commit thread gathers them into one commit.
        if callerMayCommit && commitStage == .idle && queued.isEmpty && handedOff.isEmpty && applyStage == .idle
            && lastCommitSize <= 1
        {
            commitStage = .committing(by: .caller, size: 1)
            return .commitHere
        }
        queued.append(request)
        return .queued
    }

    /// What the commit thread does next.
    enum CommitAction {
        /// Write these requests, in order, in one transaction, then report
        /// ``committed(_:mayApply:)`` or ``commitFailed()``.
        case commit([Request])
        /// Fewer requests are queued than the last commit carried: wait until signalled or the
        /// gather window closes, then ask again (`windowClosed` once it has).
        case gather
        /// Wait until signalled.
        case wait
        /// Stop.
        case stop
    }

    /// The commit thread asks for work (at start, after each commit, and when woken);
    /// `windowClosed` once the window of a ``CommitAction/gather`` has passed (it then commits
    /// what is queued).
    mutating func nextCommit(windowClosed: Bool = false) -> CommitAction {
        if case .committing(by: .commitThread, _) = commitStage {
            preconditionFailure("the commit thread asked for work during its commit")
        }
        if isClosed && queued.isEmpty {
            if commitStage == .gathering { commitStage = .idle }
            return .stop
        }
        if case .committing(by: .caller, _) = commitStage { return .wait }
        let gathering = commitStage == .gathering && !windowClosed
        guard hasRoomToCommit && (!queued.isEmpty || gathering) else {
            commitStage = .idle
            return .wait
        }
        if !windowClosed && !isClosed && queued.count < lastCommitSize {
            commitStage = .gathering
            return .gather
        }
        commitStage = .committing(by: .commitThread, size: queued.count)
        defer { queued.removeAll(keepingCapacity: true) }
        return .commit(queued)
    }

    /// Whether a waiting commit thread would now act (commit, start gathering, or stop).
    var commitThreadHasWork: Bool {
        if isClosed && queued.isEmpty { return true }
        guard hasRoomToCommit && !queued.isEmpty else { return false }
        switch commitStage {
        case .idle: return true
        case .gathering: return queued.count >= lastCommitSize || isClosed
        case .committing: return false
        }
    }

    /// The batch of whoever holds the commit stage failed, or held nothing once its records
    /// were given seqs: nothing of it is applied. Its requests fail with the commit's error.
    mutating func commitFailed() {
        guard case .committing = commitStage else { preconditionFailure("a commit failed that was not running") }
        commitStage = .idle
        commitCount += 1
        lastCommitSize = 0
    }

    /// The batch of whoever holds the commit stage is durable: returns its route. The committer
    /// applies it itself (``Route/appliesHere``, then reports ``appliedHere()``), or it waits
    /// for the apply thread behind those committed before it.
    mutating func committed(_ batch: Batch, mayApply: Bool) -> Route {
        guard case .committing(let committer, let size) = commitStage, hasRoomToCommit else {
            preconditionFailure("a commit succeeded that was not running")
        }
        commitCount += 1
        lastCommitSize = size
        let route = route(committedBy: committer, mayApply: mayApply)
        // The callers the commit thread answers itself come back to it: it gathers them.
        commitStage = route == .commitThreadCommitsAndApplies && size > 1 ? .gathering : .idle
        if route.appliesHere {
            applyStage = .applying(by: .committer)
        } else {
            handedOff.append(batch)
        }
        return route
    }

    /// Who applies a batch `committer` has just made durable (see ``Route``): a caller always
    /// (it committed only when nothing else was applied or waited to be); the commit thread
    /// when every request wants updates (`mayApply`), nothing else is applied or waits to be
    /// (so seq order holds) and nothing is queued that it should commit instead; else the
    /// apply thread.
    private func route(committedBy committer: Committer, mayApply: Bool) -> Route {
        switch committer {
        case .caller:
            precondition(mayApply && handedOff.isEmpty && applyStage == .idle, "a caller committed what it may not apply")
            return .callerCommitsAndApplies
        case .commitThread:
            let applyHere = mayApply && handedOff.isEmpty && applyStage == .idle && queued.isEmpty
            return applyHere ? .commitThreadCommitsAndApplies : .commitThreadCommitsApplyThreadApplies
        }
    }

    /// The batch of a route that ``Route/appliesHere`` is applied and its requests answered.
    mutating func appliedHere() {
        precondition(applyStage == .applying(by: .committer), "a batch was applied here that was not handed here")
        applyStage = .idle
    }

    /// What the apply thread does next.
    enum ApplyAction {
        /// Apply this committed batch and answer its requests.
        case apply(Batch)
        /// Wait until signalled.
        case wait
        /// Stop: the store is closed and every committed batch was applied.
        case stop
    }

    /// The apply thread asks for work (at start, after each batch, and when woken).
    mutating func nextApply() -> ApplyAction {
        if applyStage == .applying(by: .applyThread) { applyStage = .idle }
        if applyStage == .idle && !handedOff.isEmpty {
            applyStage = .applying(by: .applyThread)
            return .apply(handedOff.removeFirst())
        }
        return applyThreadHasWork ? .stop : .wait
    }

    /// Whether a waiting apply thread would now act (apply a batch, or stop).
    var applyThreadHasWork: Bool {
        guard applyStage == .idle else { return false }
        if !handedOff.isEmpty { return true }
        if case .committing = commitStage { return false }
        return isClosed
    }

    /// The store closes: returns the queued requests, which fail with the closed error; the
    /// commit in flight, if any, finishes and is applied. `nil` when it was closed already.
    mutating func close() -> [Request]? {
        guard !isClosed else { return nil }
        isClosed = true
        if commitStage == .gathering { commitStage = .idle }
        defer { queued = [] }
        return queued
    }
}
