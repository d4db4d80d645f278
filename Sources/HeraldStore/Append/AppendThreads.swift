import Foundation
import Synchronization

/// The store's write path: an ``AppendMachine`` under one lock with a condition for each of
/// its two threads, the commit thread and the apply thread, which carry out its actions (and
/// synchronous callers, which commit and apply their own request when the machine lets them).
final class AppendThreads: Sendable {
    private let engine: AppendEngine
    private let machine = MachineLock()
    /// The seq of the last record committed; used by whoever holds the machine's commit stage.
    private let committedSeq = Mutex<UInt64>(0)
    /// The two threads (empty once stopped), and a group each leaves as it returns.
    private let threads = Mutex<[ObjectIdentifier]>([])
    private let returned = DispatchGroup()

    init(_ engine: AppendEngine) { self.engine = engine }

    /// How long the last commit took (its write and sync), in nanoseconds: how long the commit
    /// thread waits at most for callers to come back (``AppendMachine``'s gather), within
    /// ``gatherWindowLimit``. A caller that comes back later than that would have waited as
    /// long behind a commit in flight.
    private let lastCommitNanoseconds = Atomic<UInt64>(150_000)
    static let gatherWindowLimit: UInt64 = 10_000_000

    /// How many commits ended, successful or not; for tests.
    var commitCount: Int { machine.withLock { $0.commitCount } }
    /// How many requests wait for the next commit; for tests.
    var waitingCount: Int { machine.withLock { $0.waitingCount } }
    /// Whether the threads run; for tests.
    var isRunning: Bool { threads.withLock { !$0.isEmpty } }

    /// Starts both threads; the store's in-memory state is current.
    func start() {
        committedSeq.withLock { $0 = engine.state.withLock { $0.lastSeq } }
        let started = [Thread { [self] in commitLoop() }, Thread { [self] in applyLoop() }]
        started[0].name = "herald.commit"
        started[1].name = "herald.apply"
        started[1].stackSize = 8 << 20
        threads.withLock { $0 = started.map(ObjectIdentifier.init) }
        for thread in started {
            returned.enter()
            thread.start()
        }
    }

    /// Queues `request` for the threads; it is answered on one of them, or at once when the
    /// store is closed (`closed` is the error). For callers that must not block.
    func submit(_ request: AppendRequest, closed: @autoclosure () -> any Error) {
        switch machine.withLock({ $0.enqueue(request) }) {
        case .queued: break
        case .refuse: request.answer(.failure(closed()))
        case .commitHere: preconditionFailure("a caller that may not block was asked to commit")
        }
    }

    /// Appends `request` for a caller that may block, and returns its answer: the caller
    /// commits and applies it on its own thread when the machine is idle and it wants updates,
    /// else queues it and waits. `closed` is the error of a closed store.
    func append(_ request: AppendRequest, waiter: AppendRequest.Waiter, closed: @autoclosure () -> any Error) throws
        -> AppendRequest.Committed
    {
        switch machine.withLock({ $0.enqueue(request, callerMayCommit: request.wantsUpdates) }) {
        case .queued: break
        case .refuse: throw closed()
        case .commitHere: commit([request])
        }
        return try waiter.wait()
    }

    /// Commits `requests` on this thread, which holds the machine's commit stage, then applies
    /// the batch here or leaves it to the apply thread, as its ``AppendMachine/Route`` says.
    /// Requests whose records cannot have their seqs (an import out of order) are answered at
    /// once; the others are written together.
    private func commit(_ requests: [AppendRequest]) {
        let lastSeq = committedSeq.withLock { $0 }
        let (batch, rejected) = engine.assignSeqs(requests, after: lastSeq)
        for (request, error) in rejected { request.answer(.failure(error)) }
        do {
            guard !batch.requests.isEmpty else { throw CancellationError() }
            let start = MachineLock.now()
            try engine.write(batch)
            lastCommitNanoseconds.store(MachineLock.now() - start, ordering: .relaxed)
        } catch {
            machine.withLock { $0.commitFailed() }
            for request in batch.requests { request.answer(.failure(error)) }
            return
        }
        committedSeq.withLock { $0 = batch.seqs.last ?? lastSeq }
        let mayApply = batch.requests.allSatisfy(\.wantsUpdates)
        guard machine.withLock({ $0.committed(batch, mayApply: mayApply) }).appliesHere else { return }
        engine.apply(batch)
        machine.withLock { $0.appliedHere() }
    }

    /// Fails the requests queued with `closed`, lets the commit in flight finish and be
    /// applied, and returns once both threads have returned (at once on one of them).
    /// Idempotent.
    func stop(closed: @autoclosure () -> any Error) {
        if let failed = machine.withLock({ $0.close() }), !failed.isEmpty {
            let error = closed()
            for request in failed { request.answer(.failure(error)) }
        }
        let running = threads.withLock { threads in
            defer { threads = [] }
            return threads
        }
        if !running.isEmpty && !running.contains(ObjectIdentifier(Thread.current)) { returned.wait() }
    }

    private func commitLoop() {
        machine.lock()
        var deadline: UInt64?
        var windowClosed = false
        while true {
            switch machine.state.nextCommit(windowClosed: windowClosed) {
            case .wait:
                deadline = nil
                windowClosed = false
                machine.wait(.commitThread)
            case .gather:
                // Callers are coming back: wait for them, until the machine signals that enough
                // are queued or the window closes.
                let window = min(lastCommitNanoseconds.load(ordering: .relaxed), Self.gatherWindowLimit)
                let end = deadline ?? MachineLock.now() + window
                deadline = end
                windowClosed = !machine.wait(.commitThread, until: end)
            case .stop:
                machine.unlock()
                returned.leave()
                return
            case .commit(let requests):
                deadline = nil
                windowClosed = false
                machine.unlock()
                commit(requests)
                machine.lock()
            }
        }
    }

    private func applyLoop() {
        machine.lock()
        while true {
            switch machine.state.nextApply() {
            case .wait:
                machine.wait(.applyThread)
            case .stop:
                machine.unlock()
                returned.leave()
                return
            case .apply(let batch):
                // Taking it made room for the commit thread.
                machine.signalWaiting()
                machine.unlock()
                engine.apply(batch)
                machine.lock()
            }
        }
    }
}

/// An ``AppendMachine`` under a pthread mutex, with a condition each for the commit thread
/// and the apply thread to wait on. Every change made through it ends with
/// ``signalWaiting()``: a thread is signalled when the machine says it now has work, and a
/// signal with nobody waiting is lost, harmlessly, since a thread asks the machine before it
/// waits.
private final class MachineLock: @unchecked Sendable {
    // @unchecked: `state` is read and changed only with `mutex` locked.
    var state = AppendMachine<AppendRequest, CommittedBatch>()
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let conditions = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 2)

    enum Waiter: Int {
        case commitThread = 0
        case applyThread = 1
    }

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        for index in 0..<2 { pthread_cond_init(conditions + index, &attributes) }
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        for index in 0..<2 { pthread_cond_destroy(conditions + index) }
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` on the machine, locked, then signals the threads that now have work.
    func withLock<R>(_ body: (inout AppendMachine<AppendRequest, CommittedBatch>) -> R) -> R {
        lock()
        defer {
            signalWaiting()
            unlock()
        }
        return body(&state)
    }

    /// Signals each thread that would now act; called locked, after a change.
    func signalWaiting() {
        if state.commitThreadHasWork { pthread_cond_signal(conditions + Waiter.commitThread.rawValue) }
        if state.applyThreadHasWork { pthread_cond_signal(conditions + Waiter.applyThread.rawValue) }
    }

    /// Waits, locked, until `waiter` is signalled (or woken spuriously).
    func wait(_ waiter: Waiter) {
        pthread_cond_wait(conditions + waiter.rawValue, mutex)
    }

    /// Waits, locked, until `waiter` is signalled or the clock reaches `deadline`
    /// (nanoseconds, see ``now()``); returns false once the deadline has passed.
    func wait(_ waiter: Waiter, until deadline: UInt64) -> Bool {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(conditions + waiter.rawValue, mutex, &time) != ETIMEDOUT && Self.now() < deadline
    }

    /// The conditions' clock (monotonic where it can be chosen), in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC, &time)
        #else
        clock_gettime(CLOCK_REALTIME, &time)
        #endif
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
