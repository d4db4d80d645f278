import Foundation
import LMDB
import Synchronization

/// One caller's records, waiting to be committed and applied.
final class AppendRequest: @unchecked Sendable {
    // @unchecked: every field is set at init and never changed; `reply` is used once, by
    // whichever thread answers the request (see ``answer(_:)``).
    let records: [PendingRecord]
    /// Whether the caller wants each event's updates (else only the seqs).
    let wantsUpdates: Bool
    private let reply: Reply

    /// How the caller waits for its answer.
    enum Reply {
        /// A synchronous caller, blocked on its own waiter.
        case waiter(Waiter)
        /// An `async` caller, suspended.
        case continuation(CheckedContinuation<Committed, any Error>)
    }

    init(_ records: [PendingRecord], wantsUpdates: Bool, reply: Reply) {
        self.records = records
        self.wantsUpdates = wantsUpdates
        self.reply = reply
    }

    /// What a request got: the seq of its first record and, when it asked, its records
    /// applied with their updates.
    struct Committed: Sendable {
        var firstSeq: UInt64
        var applied: [Applied]
    }

    /// Answers the caller; called once.
    func answer(_ result: Result<Committed, any Error>) {
        switch reply {
        case .waiter(let waiter): waiter.finish(result)
        case .continuation(let continuation): continuation.resume(with: result)
        }
    }

    /// A synchronous caller's answer: set once, then the caller is woken.
    final class Waiter: @unchecked Sendable {
        // @unchecked: `result` is written once, before `done` is signalled, and read only
        // after waiting on it.
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<Committed, any Error>?

        fileprivate func finish(_ result: Result<Committed, any Error>) {
            self.result = result
            done.signal()
        }

        /// Blocks until the request is answered.
        func wait() throws -> Committed {
            done.wait()
            return try result!.get()
        }
    }
}

/// Requests committed together under consecutive seqs (imports: their own), waiting to be
/// applied.
struct CommittedBatch: Sendable {
    var requests: [AppendRequest]
    /// The seqs of every record of `requests`, in order.
    var seqs: [UInt64]
}

/// What the write path uses of a store: its environment and log, its in-memory state and
/// the followers and snapshot writer that state feeds. Never the ``Store`` itself, so the
/// threads that hold it never keep a store alive: a store is released by its users and must
/// close on the thread that lets go last (so that the directory can be opened again at
/// once); its deinit stops the threads and waits for them.
final class AppendEngine: Sendable {
    let path: String
    let options: Store.Options
    let environment: Environment
    /// The store's log database.
    let log: Database
    let state: Store.StateCell
    let followers: Followers
    let snapshotWriter: SnapshotWriter
    /// Whether automatic snapshots may be taken (see ``Store/snapshotsFitConfiguration``).
    let snapshotsFitConfiguration: Bool

    init(
        path: String, options: Store.Options, environment: Environment, log: Database, state: Store.StateCell,
        followers: Followers, snapshotWriter: SnapshotWriter, snapshotsFitConfiguration: Bool
    ) {
        self.path = path
        self.options = options
        self.environment = environment
        self.log = log
        self.state = state
        self.followers = followers
        self.snapshotWriter = snapshotWriter
        self.snapshotsFitConfiguration = snapshotsFitConfiguration
    }
}

/// The store's write path: an ``AppendMachine`` under a lock, and the commit thread and the
/// apply thread that carry out its actions (and synchronous callers, which commit and apply
/// their own request when the machine lets them).
final class AppendThreads: Sendable {
    private let engine: AppendEngine
    private let machine = Mutex(AppendMachine<AppendRequest, CommittedBatch>())
    /// The seq of the last record committed; used by whoever holds the machine's commit role.
    private let committedSeq = Mutex<UInt64>(0)
    /// Signalled once per wake-up the machine asks for.
    private let wakeCommitter = DispatchSemaphore(value: 0)
    private let wakeApplier = DispatchSemaphore(value: 0)
    /// Signalled by each thread as it returns.
    private let stopped = DispatchSemaphore(value: 0)
    /// Whether the threads were started and not yet joined, and their pthreads (a stop from
    /// one of them must not wait for itself).
    private let running = Mutex<(Bool, [pthread_t])>((false, []))

    init(_ engine: AppendEngine) { self.engine = engine }

    /// How long the commit thread waits at most for callers to come back (``AppendMachine``'s
    /// gather): about one commit's fsync on a laptop SSD.
    static let gatherWindowMicroseconds = 150

    /// How many commits ended, successful or not; for tests.
    var commitCount: Int { machine.withLock { $0.commitCount } }
    /// How many requests wait for the next commit; for tests.
    var waitingCount: Int { machine.withLock { $0.waitingCount } }
    /// Whether the threads run; for tests.
    var isRunning: Bool { running.withLock { $0.0 } }

    /// Starts both threads; the store's in-memory state is current.
    func start() {
        committedSeq.withLock { $0 = engine.state.withLock { $0.lastSeq } }
        running.withLock { $0.0 = true }
        let committer = Thread { [self] in
            register()
            commitLoop()
        }
        committer.name = "herald.commit"
        let applier = Thread { [self] in
            register()
            applyLoop()
        }
        applier.name = "herald.apply"
        applier.stackSize = 8 << 20
        committer.start()
        applier.start()
    }

    private func register() {
        let me = pthread_self()
        running.withLock { $0.1.append(me) }
    }

    /// Queues `request` for the threads; it is answered on one of them, or at once when the
    /// store is closed (`closed` is the error). For callers that must not block.
    func submit(_ request: AppendRequest, closed: @autoclosure () -> any Error) {
        switch machine.withLock({ $0.enqueue(request) }) {
        case .none: break
        case .wakeCommitter: wakeCommitter.signal()
        case .refuse: request.answer(.failure(closed()))
        case .commitHere: preconditionFailure("a caller that may not block was asked to commit")
        }
    }

    /// Appends `request` for a caller that may block, and returns its answer: the caller
    /// commits (and applies) it on its own thread when the machine is idle, else queues it and
    /// waits. `closed` is the error of a closed store.
    func append(_ request: AppendRequest, waiter: AppendRequest.Waiter, closed: @autoclosure () -> any Error) throws
        -> AppendRequest.Committed
    {
        switch machine.withLock({ $0.enqueue(request, callerMayCommit: true) }) {
        case .none: break
        case .wakeCommitter: wakeCommitter.signal()
        case .refuse: throw closed()
        case .commitHere: commitHere(request)
        }
        return try waiter.wait()
    }

    /// The caller's own commit of `request`, then its apply or hand-off to the apply thread.
    private func commitHere(_ request: AppendRequest) {
        let lastSeq = committedSeq.withLock { $0 }
        let (batch, rejected) = engine.assignSeqs([request], after: lastSeq)
        var failure = rejected.first?.1
        if failure == nil {
            do { try engine.write(batch) } catch { failure = error }
        }
        if let failure {
            let (wakeCommitter, wakeApplier) = machine.withLock { $0.callerCommitFailed() }
            wake(committer: wakeCommitter, applier: wakeApplier)
            request.answer(.failure(failure))
            return
        }
        committedSeq.withLock { $0 = batch.seqs.last ?? lastSeq }
        committed(batch)
    }

    /// Reports `batch` durable to the machine, then applies it here or hands it to the apply
    /// thread, as the machine says. A bulk batch (no request wants updates) is always handed
    /// off, so that its caller writes its next batch while this one is applied.
    private func committed(_ batch: CommittedBatch) {
        let mayApply = batch.requests.allSatisfy(\.wantsUpdates)
        switch machine.withLock({ $0.committed(batch, mayApply: mayApply) }) {
        case .applyHere(let wakeCommitter):
            wake(committer: wakeCommitter, applier: false)
            engine.apply(batch)
            let wakeApplier = machine.withLock { $0.appliedHere() }
            wake(committer: false, applier: wakeApplier)
        case .handOff(let wakeApplier, let wakeCommitter):
            wake(committer: wakeCommitter, applier: wakeApplier)
        }
    }

    private func wake(committer: Bool, applier: Bool) {
        if committer { wakeCommitter.signal() }
        if applier { wakeApplier.signal() }
    }

    /// Fails the requests queued with `closed`, lets the commit in flight finish and be applied,
    /// and returns once both threads have stopped (unless called on one of them). Idempotent.
    func stop(closed: @autoclosure () -> any Error) {
        if let action = machine.withLock({ $0.close() }) {
            let error = closed()
            for request in action.fail { request.answer(.failure(error)) }
            wake(committer: action.wakeCommitter, applier: action.wakeApplier)
        }
        let me = pthread_self()
        let join = running.withLock { running in
            defer { running.0 = false }
            return running.0 && !running.1.contains { pthread_equal($0, me) != 0 }
        }
        guard join else { return }
        stopped.wait()
        stopped.wait()
    }

    private func commitLoop() {
        var gathered = false
        while true {
            let action = machine.withLock { $0.nextCommit(gathered: gathered) }
            gathered = false
            switch action {
            case .sleep:
                wakeCommitter.wait()
            case .gather:
                // Yield the processor to the callers coming back until enough are queued (the
                // machine then signals) or the window closes. Yielding, not a timed sleep: on
                // a busy machine a sleeping thread is woken before the callers it waits for
                // have run, and a timer's slack can cost more than the fsync it saves.
                let deadline = DispatchTime.now() + .microseconds(Self.gatherWindowMicroseconds)
                while wakeCommitter.wait(timeout: .now()) == .timedOut && DispatchTime.now() < deadline { sched_yield() }
                gathered = true
            case .stop(let wake):
                if wake { wakeApplier.signal() }
                stopped.signal()
                return
            case .commit(let requests):
                // Requests whose records cannot have their seqs (an import out of order) are
                // answered at once; the others are written together.
                let lastSeq = committedSeq.withLock { $0 }
                let (batch, rejected) = engine.assignSeqs(requests, after: lastSeq)
                for (request, error) in rejected { request.answer(.failure(error)) }
                do {
                    try engine.write(batch)
                } catch {
                    let (failed, wake) = machine.withLock { $0.commitFailed(batch.requests) }
                    for request in failed { request.answer(.failure(error)) }
                    if wake { wakeApplier.signal() }
                    continue
                }
                committedSeq.withLock { $0 = batch.seqs.last ?? lastSeq }
                committed(batch)
            }
        }
    }

    private func applyLoop() {
        while true {
            switch machine.withLock({ $0.nextApply() }) {
            case .sleep:
                wakeApplier.wait()
            case .stop:
                stopped.signal()
                return
            case .apply(let batch, let wake):
                if wake { wakeCommitter.signal() }
                engine.apply(batch)
            }
        }
    }
}
