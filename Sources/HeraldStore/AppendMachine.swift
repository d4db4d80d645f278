/// The decisions of a store's write path, without threads or I/O: which queued requests the
/// commit thread writes next, which committed batch the apply thread applies next, when each
/// thread sleeps or must be woken, and which requests fail when the store closes.
///
/// A value type driven by events (`mutating func`s) that return actions, in the manner of
/// swift-nio's state machines; ``Store`` keeps it under a lock and carries the actions out
/// (see ``AppendThreads``). Generic over what it moves, so its tests use plain values.
///
/// Concurrent callers that each wait for their answer come back together after it: the commit
/// thread then gathers them (``CommitAction/gather``) until as many are queued as the last
/// commit carried, or a short window closes, so that one commit carries them all instead of
/// the first alone.
///
/// A caller that may block (a synchronous append) commits its own request on its own thread
/// when nobody commits, nothing is queued and the last commit carried one request at most
/// (``EnqueueAction/commitHere``): a lone caller then pays no hand-off, while concurrent
/// callers still meet in the commit thread's gather. Requests that arrive meanwhile queue for
/// the commit thread, which the caller wakes once its commit ends.
///
/// Whoever committed a batch (a caller, or the commit thread when nothing else is queued)
/// applies it too when it may and nothing else is applied or waits to be
/// (``CommittedAction/applyHere(wakeCommitter:)``): one wake less per commit. Else the apply
/// thread does, in commit order.
///
/// The pipeline has two stages. The commit thread takes everything queued as one batch, writes
/// it in one transaction and syncs it; the apply thread then applies it to the projection and
/// answers its requests. While batch N is applied, batch N+1 commits; committed batches wait
/// for the apply thread in order, at most ``committedLimit`` of them (no commit starts while
/// that many wait), so the projection is a few batches behind the log at most, and never
/// ahead of it: nothing is applied before its commit succeeded, and a failed commit applies
/// nothing.
struct AppendMachine<Request, Batch> {
    /// Requests waiting for the next commit, oldest first.
    private var queued: [Request] = []
    /// Who writes a batch now, if anyone: the commit thread, or a caller on its own thread.
    private var committer = Role.none
    /// Who applies a batch now, if anyone.
    private var applier = Applier.none

    /// Who holds the commit stage.
    enum Role: Equatable {
        case none
        /// The commit thread.
        case thread
        /// A caller, on its own thread.
        case caller
    }

    /// Who holds the apply stage.
    enum Applier: Equatable {
        case none
        /// The apply thread.
        case applyThread
        /// Whoever committed the batch (a caller or the commit thread), on its own thread.
        case committer
    }
    /// Committed batches waiting for the apply thread, oldest first.
    private var committed: [Batch] = []
    /// How many committed batches may wait for the apply thread. More than one, so that the
    /// commit thread goes on with the next commit while the apply thread is still waking up.
    static var committedLimit: Int { 4 }
    private var hasRoomToCommit: Bool { committed.count < Self.committedLimit }
    /// Whether each thread sleeps until it is woken (the action that wakes it says so).
    private var committerSleeps = false
    /// Whether the commit thread's sleep is a gather: it is woken as soon as
    /// `lastCommitSize` requests are queued, or its window closes.
    private var gathering = false
    /// How many requests the last successful commit carried (0 after a failed one: its
    /// callers need not come back), and how many the commit in flight carries.
    private var lastCommitSize = 0
    private var committingSize = 0
    private var applierSleeps = false
    /// Whether the commit thread applied its last batch of several requests itself, so that
    /// their callers come back to it soon.
    private var answeredItsGroup = false
    /// Whether the store was closed: requests are refused, and the threads stop once the
    /// batches in flight are applied.
    private(set) var isClosed = false
    /// How many commits ended, successful or not.
    private(set) var commitCount = 0
    /// How many requests wait for the next commit.
    var waitingCount: Int { queued.count }

    init() {}

    /// What to do after ``enqueue(_:)``.
    enum EnqueueAction: Equatable {
        /// Nothing: the commit thread will find the request.
        case none
        /// Wake the sleeping commit thread.
        case wakeCommitter
        /// The store is closed: fail the request with the closed error.
        case refuse
        /// Nobody commits and nothing is queued: the caller writes its request itself, in one
        /// transaction, then reports ``committed(_:mayApply:)`` or
        /// ``callerCommitFailed()``. The request was not queued.
        case commitHere
    }

    /// A caller's request arrives; `callerMayCommit` when the caller may block on its own
    /// commit (a synchronous append, not an `async` one, nor one inside a transaction).
    mutating func enqueue(_ request: Request, callerMayCommit: Bool = false) -> EnqueueAction {
        guard !isClosed else { return .refuse }
        // Not after a commit of several requests: their callers are coming back, and the
        // commit thread gathers them into one commit.
        if callerMayCommit && committer == .none && queued.isEmpty && hasRoomToCommit && lastCommitSize <= 1 {
            committer = .caller
            committingSize = 1
            return .commitHere
        }
        queued.append(request)
        if committer == .none && committerSleeps && hasRoomToCommit && (!gathering || queued.count >= lastCommitSize) {
            committerSleeps = false
            gathering = false
            return .wakeCommitter
        }
        return .none
    }

    /// What the commit thread does next.
    enum CommitAction {
        /// Write these requests, in order, in one transaction, then report
        /// ``committed(_:mayApply:)`` or ``commitFailed(_:)``.
        case commit([Request])
        /// Fewer requests are queued than the last commit carried: wait until woken or for
        /// the gather window at most, then ask again with `gathered`.
        case gather
        /// Sleep until woken.
        case sleep
        /// Stop; first wake the apply thread when `wakeApplier`, so it can stop too.
        case stop(wakeApplier: Bool)
    }

    /// The commit thread asks for work (at start, after each commit, and when woken);
    /// `gathered` after a ``CommitAction/gather`` (it then commits what is queued).
    mutating func nextCommit(gathered: Bool = false) -> CommitAction {
        precondition(committer != .thread, "the commit thread asked for work during its commit")
        committerSleeps = false
        gathering = false
        // Callers it has just answered itself are coming back: gather them even before the
        // first is queued, rather than sleep until it wakes the thread.
        let callersComeBack = answeredItsGroup
        answeredItsGroup = false
        if isClosed && queued.isEmpty { return .stop(wakeApplier: wakeApplierIfSleeping()) }
        if committer == .none && (!queued.isEmpty || callersComeBack) && hasRoomToCommit {
            if !gathered && !isClosed && queued.count < lastCommitSize {
                committerSleeps = true
                gathering = true
                return .gather
            }
            if queued.isEmpty {
                committerSleeps = true
                return .sleep
            }
            committer = .thread
            committingSize = queued.count
            defer { queued.removeAll(keepingCapacity: true) }
            return .commit(queued)
        }
        committerSleeps = true
        return .sleep
    }

    /// The commit thread's batch failed: nothing of it is applied. Returns the requests to
    /// fail with the commit's error (exactly those of the batch) and whether to wake the apply
    /// thread (only so that it can stop, once closed).
    mutating func commitFailed(_ requests: [Request]) -> (fail: [Request], wakeApplier: Bool) {
        precondition(committer == .thread, "a commit failed that was not running")
        committer = .none
        commitCount += 1
        lastCommitSize = 0
        return (requests, isClosed && wakeApplierIfSleeping())
    }

    /// What the commit thread, or a caller that committed its own request, does once its
    /// batch is durable.
    enum CommittedAction: Equatable {
        /// Apply the batch on this thread and answer its requests, then report
        /// ``appliedHere()``; first wake the commit thread when `wakeCommitter` (requests
        /// queued during a caller's commit).
        case applyHere(wakeCommitter: Bool)
        /// The batch waits for the apply thread, behind those committed before it: wake the
        /// threads as told (a caller then waits for its answer).
        case handOff(wakeApplier: Bool, wakeCommitter: Bool)
    }

    /// The batch of whoever holds the commit stage is durable. It applies the batch itself
    /// when `mayApply`, nothing else is applied or waits to be (so seq order holds), and (for
    /// the commit thread) nothing is queued that it should commit instead; else the apply
    /// thread does.
    mutating func committed(_ batch: Batch, mayApply: Bool) -> CommittedAction {
        precondition(committer != .none && hasRoomToCommit, "a commit succeeded that was not running")
        let byCaller = committer == .caller
        committer = .none
        commitCount += 1
        lastCommitSize = committingSize
        let wakeCommitter = byCaller && wakeCommitterIfWorkWaits()
        if mayApply && committed.isEmpty && applier == .none && (byCaller || queued.isEmpty) {
            applier = .committer
            answeredItsGroup = !byCaller && committingSize > 1
            return .applyHere(wakeCommitter: wakeCommitter)
        }
        committed.append(batch)
        // One that applies its own batch wakes the apply thread when it is done.
        return .handOff(wakeApplier: applier == .none && wakeApplierIfSleeping(), wakeCommitter: wakeCommitter)
    }

    /// The caller's commit failed: its request alone fails, nothing of it is applied. Returns
    /// which threads to wake (the commit thread for requests queued meanwhile, or either so
    /// that it can stop, once closed).
    mutating func callerCommitFailed() -> (wakeCommitter: Bool, wakeApplier: Bool) {
        precondition(committer == .caller, "a caller's commit failed that was not running")
        committer = .none
        commitCount += 1
        lastCommitSize = 0
        return (wakeCommitterIfWorkWaits(), isClosed && wakeApplierIfSleeping())
    }

    /// The batch of ``CommittedAction/applyHere(wakeCommitter:)`` is applied and its requests
    /// answered; returns whether to wake the apply thread (batches committed meanwhile, or the
    /// store closed).
    mutating func appliedHere() -> Bool {
        precondition(applier == .committer, "a batch was applied here that was not handed here")
        applier = .none
        return (!committed.isEmpty || isClosed) && wakeApplierIfSleeping()
    }

    /// What the apply thread does next.
    enum ApplyAction {
        /// Apply this committed batch and answer its requests; first wake the commit thread
        /// when `wakeCommitter` (requests were waiting for the slot to empty).
        case apply(Batch, wakeCommitter: Bool)
        /// Sleep until woken.
        case sleep
        /// Stop: the store is closed and every committed batch was applied.
        case stop
    }

    /// The apply thread asks for work (at start, after each batch, and when woken).
    mutating func nextApply() -> ApplyAction {
        if applier == .applyThread { applier = .none }
        if applier == .none && !committed.isEmpty {
            let batch = committed.removeFirst()
            applier = .applyThread
            var wake = false
            if committer == .none && committerSleeps && !gathering && !queued.isEmpty {
                committerSleeps = false
                wake = true
            }
            return .apply(batch, wakeCommitter: wake)
        }
        if isClosed && committer == .none && applier == .none && committed.isEmpty { return .stop }
        applierSleeps = true
        return .sleep
    }

    /// What to do after ``close()``.
    struct CloseAction {
        /// Requests that had not started to commit: fail them with the closed error.
        var fail: [Request]
        /// Wake the threads that sleep, so that they stop.
        var wakeCommitter: Bool
        var wakeApplier: Bool
    }

    /// The store closes. Requests queued fail; the commit in flight, if any, finishes and is
    /// applied. Returns `nil` when the store was closed already.
    mutating func close() -> CloseAction? {
        guard !isClosed else { return nil }
        isClosed = true
        let failed = queued
        queued = []
        let wakeCommitter = committerSleeps
        committerSleeps = false
        gathering = false
        return CloseAction(fail: failed, wakeCommitter: wakeCommitter, wakeApplier: wakeApplierIfSleeping())
    }

    /// Wakes the commit thread when it sleeps and has work: queued requests it has room to
    /// commit, or a close to stop for.
    private mutating func wakeCommitterIfWorkWaits() -> Bool {
        guard committerSleeps && ((!queued.isEmpty && hasRoomToCommit) || isClosed) else { return false }
        committerSleeps = false
        gathering = false
        return true
    }

    private mutating func wakeApplierIfSleeping() -> Bool {
        defer { applierSleeps = false }
        return applierSleeps
    }
}
