import Foundation
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

/// The store's write path: an ``AppendMachine`` under a lock, and the commit thread and the
/// apply thread that carry out its actions.
///
/// The threads do not retain the store: a store is released by its users and must close on
/// the thread that lets go last (so that the directory can be opened again at once), and a
/// thread that retained it even for one call could be that thread. They hold it unmanaged and
/// use it through `_withUnsafeGuaranteedRef`, which retains nothing. That is sound because
/// the store's deinit stops them and waits until both have returned (``stop(closed:)``)
/// before any of its properties goes.
final class AppendThreads: Sendable {
    private let machine = Mutex(AppendMachine<AppendRequest, CommittedBatch>())
    /// Signalled once per wake-up the machine asks for.
    private let wakeCommitter = DispatchSemaphore(value: 0)
    private let wakeApplier = DispatchSemaphore(value: 0)
    /// Signalled by each thread as it returns.
    private let stopped = DispatchSemaphore(value: 0)
    /// Whether the threads were started and not yet joined.
    private let running = Mutex(false)

    init() {}

    /// How long the commit thread waits at most for callers to come back (``AppendMachine``'s
    /// gather): about one commit's fsync on a laptop SSD.
    static let gatherWindowMicroseconds = 150

    /// How many commits ended, successful or not; for tests.
    var commitCount: Int { machine.withLock { $0.commitCount } }
    /// How many requests wait for the next commit; for tests.
    var waitingCount: Int { machine.withLock { $0.waitingCount } }
    /// Whether the threads run; for tests.
    var isRunning: Bool { running.withLock { $0 } }

    /// Starts both threads for `store`, whose in-memory state is current.
    func start(_ store: Store) {
        running.withLock { $0 = true }
        let store = Unmanaged.passUnretained(store)
        let committer = Thread { [self] in commitLoop(store) }
        committer.name = "herald.commit"
        let applier = Thread { [self] in applyLoop(store) }
        applier.name = "herald.apply"
        applier.stackSize = 8 << 20
        committer.start()
        applier.start()
    }

    /// Queues `request`; it is answered on one of the threads, or at once when the store is
    /// closed (`closed` is the error).
    func submit(_ request: AppendRequest, closed: @autoclosure () -> any Error) {
        switch machine.withLock({ $0.enqueue(request) }) {
        case .none: break
        case .wakeCommitter: wakeCommitter.signal()
        case .refuse: request.answer(.failure(closed()))
        }
    }

    /// Fails the requests queued with `closed`, lets the commit in flight finish and be applied,
    /// and returns once both threads have stopped. Idempotent.
    func stop(closed: @autoclosure () -> any Error) {
        if let action = machine.withLock({ $0.close() }) {
            let error = closed()
            for request in action.fail { request.answer(.failure(error)) }
            if action.wakeCommitter { wakeCommitter.signal() }
            if action.wakeApplier { wakeApplier.signal() }
        }
        let join = running.withLock { running in
            defer { running = false }
            return running
        }
        guard join else { return }
        stopped.wait()
        stopped.wait()
    }

    private func commitLoop(_ store: Unmanaged<Store>) {
        var lastSeq = store._withUnsafeGuaranteedRef { $0.lastSeq }
        var gathered = false
        while true {
            let action = machine.withLock { $0.nextCommit(gathered: gathered) }
            gathered = false
            switch action {
            case .sleep:
                wakeCommitter.wait()
            case .gather:
                // Woken as soon as enough are queued; the window bounds the wait for callers
                // that do not come back.
                _ = wakeCommitter.wait(timeout: .now() + .microseconds(Self.gatherWindowMicroseconds))
                gathered = true
            case .stop(let wake):
                if wake { wakeApplier.signal() }
                stopped.signal()
                return
            case .commit(let requests):
                // Requests whose records cannot have their seqs (an import out of order) are
                // answered at once; the others are written together.
                let (batch, rejected) = store._withUnsafeGuaranteedRef { $0.assignSeqs(requests, after: lastSeq) }
                for (request, error) in rejected { request.answer(.failure(error)) }
                do {
                    try store._withUnsafeGuaranteedRef { try $0.write(batch) }
                } catch {
                    let (failed, wake) = machine.withLock { $0.commitFailed(batch.requests) }
                    for request in failed { request.answer(.failure(error)) }
                    if wake { wakeApplier.signal() }
                    continue
                }
                lastSeq = batch.seqs.last ?? lastSeq
                if machine.withLock({ $0.commitSucceeded(batch) }) { wakeApplier.signal() }
            }
        }
    }

    private func applyLoop(_ store: Unmanaged<Store>) {
        while true {
            switch machine.withLock({ $0.nextApply() }) {
            case .sleep:
                wakeApplier.wait()
            case .stop:
                stopped.signal()
                return
            case .apply(let batch, let wake):
                if wake { wakeCommitter.signal() }
                let answers = store._withUnsafeGuaranteedRef { $0.apply(batch) }
                for (request, committed) in zip(batch.requests, answers) { request.answer(.success(committed)) }
            }
        }
    }
}
