import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The write path's decisions, driven by hand: no threads, no LMDB. Requests are plain
/// numbers and a committed batch is the list of the requests it holds.
@Suite("Append state machine", .testThreads)
struct AppendMachineTests {
    typealias Machine = AppendMachine<Int, [Int]>

    /// A machine whose two threads have started and gone to sleep.
    static func idle() -> Machine {
        var machine = Machine()
        guard case .sleep = machine.nextCommit(), case .sleep = machine.nextApply() else {
            Issue.record("a fresh machine gave work")
            return machine
        }
        return machine
    }

    /// The requests of a `.commit` action, or nil.
    static func commit(_ action: Machine.CommitAction) -> [Int]? {
        if case .commit(let requests) = action { return requests }
        return nil
    }

    /// The batch of an `.apply` action, and whether it wakes the commit thread; or nil.
    static func apply(_ action: Machine.ApplyAction) -> (batch: [Int], wakeCommitter: Bool)? {
        if case .apply(let batch, let wake) = action { return (batch, wake) }
        return nil
    }

    static func isSleep(_ action: Machine.CommitAction) -> Bool {
        if case .sleep = action { return true }
        return false
    }

    static func isSleep(_ action: Machine.ApplyAction) -> Bool {
        if case .sleep = action { return true }
        return false
    }

    static func isStop(_ action: Machine.ApplyAction) -> Bool {
        if case .stop = action { return true }
        return false
    }

    static func isGather(_ action: Machine.CommitAction) -> Bool {
        if case .gather = action { return true }
        return false
    }

    @Test("a request wakes the sleeping commit thread once; it commits it, then the apply thread applies it")
    func oneRequest() {
        var machine = Self.idle()
        let wakesApplier: Bool
        let enqueued: Machine.EnqueueAction
        enqueued = machine.enqueue(1)
        #expect(enqueued == .wakeCommitter)
        #expect(Self.commit(machine.nextCommit()) == [1])
        wakesApplier = machine.commitSucceeded([1])
        #expect(wakesApplier == true, "the sleeping apply thread is woken")
        let applied = Self.apply(machine.nextApply())
        #expect(applied?.batch == [1] && applied?.wakeCommitter == false)
        #expect(Self.isSleep(machine.nextApply()))
        #expect(Self.isSleep(machine.nextCommit()))
        #expect(machine.commitCount == 1)
    }

    @Test("requests queued while a commit runs wake nobody and make the next commit, together, in order")
    func queueingDuringCommit() {
        var machine = Self.idle()
        var wakesApplier: Bool
        var enqueued: Machine.EnqueueAction
        enqueued = machine.enqueue(1)
        #expect(enqueued == .wakeCommitter)
        #expect(Self.commit(machine.nextCommit()) == [1])
        enqueued = machine.enqueue(2)
        #expect(enqueued == .none)
        enqueued = machine.enqueue(3)
        #expect(enqueued == .none)
        enqueued = machine.enqueue(4)
        #expect(enqueued == .none)
        wakesApplier = machine.commitSucceeded([1])
        #expect(wakesApplier, "the sleeping apply thread is woken")
        #expect(Self.apply(machine.nextApply())?.batch == [1])
        #expect(Self.commit(machine.nextCommit()) == [2, 3, 4], "one commit for everything queued meanwhile")
        wakesApplier = machine.commitSucceeded([2, 3, 4])
        #expect(wakesApplier == false, "the apply thread has not slept since it was woken")
        #expect(Self.apply(machine.nextApply())?.batch == [2, 3, 4])
    }

    @Test("callers coming back after their answers are gathered into one commit, or the window ends the wait")
    func gathering() {
        var machine = Self.idle()
        let result1 = machine.enqueue(1)
        #expect(result1 == .wakeCommitter)
        let second = machine.enqueue(2), third = machine.enqueue(3)
        #expect(second == .none && third == .none)
        #expect(Self.commit(machine.nextCommit()) == [1, 2, 3])
        let woke = machine.commitSucceeded([1, 2, 3])
        #expect(woke)
        #expect(Self.isSleep(machine.nextCommit()))
        #expect(Self.apply(machine.nextApply())?.batch == [1, 2, 3])
        // The three callers come back one by one: the first wakes the commit thread, which
        // gathers; the third, as many as the last commit carried, wakes it again.
        let result2 = machine.enqueue(4)
        #expect(result2 == .wakeCommitter)
        guard case .gather = machine.nextCommit() else {
            Issue.record("one request of three back: expected a gather")
            return
        }
        let result3 = machine.enqueue(5)
        #expect(result3 == .none, "still gathering")
        #expect(Self.isSleep(machine.nextApply()), "the apply thread does not wake a gathering commit thread")
        let result4 = machine.enqueue(6)
        #expect(result4 == .wakeCommitter)
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [4, 5, 6])
        let result5 = machine.commitSucceeded([4, 5, 6])
        #expect(result5 == true)
        #expect(Self.apply(machine.nextApply())?.batch == [4, 5, 6])
        // Only one comes back: the window closes and it commits alone; then no more gathering.
        #expect(Self.isSleep(machine.nextCommit()))
        let result6 = machine.enqueue(7)
        #expect(result6 == .wakeCommitter)
        guard case .gather = machine.nextCommit() else {
            Issue.record("one request of three back: expected a gather")
            return
        }
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [7])
        let result7 = machine.commitSucceeded([7])
        #expect(result7 == false, "the apply thread is awake")
        let result8 = machine.enqueue(8)
        #expect(result8 == .none)
        #expect(Self.commit(machine.nextCommit()) == [8], "the last commit carried one: no gather")
        // Close while gathering: the commit thread is woken and stops once the queue is failed.
        let result9 = machine.commitSucceeded([8])
        #expect(result9 == false)
        _ = machine.enqueue(9)
        _ = machine.enqueue(10)
        #expect(Self.commit(machine.nextCommit()) == [9, 10])
        _ = machine.commitSucceeded([9, 10])
        _ = machine.enqueue(11)
        guard case .gather = machine.nextCommit() else {
            Issue.record("one request of two back: expected a gather")
            return
        }
        let closing = machine.close()
        #expect(closing?.fail == [11] && closing?.wakeCommitter == true)
        guard case .stop = machine.nextCommit(gathered: true) else {
            Issue.record("a closed machine with nothing queued: expected stop")
            return
        }
    }

    @Test("batch N is applied while later ones commit; once the limit of batches waits, requests wait until one is taken")
    func pipelining() {
        var machine = Self.idle()
        var wakesApplier: Bool
        var enqueued: Machine.EnqueueAction
        _ = machine.enqueue(1)
        _ = machine.nextCommit()
        wakesApplier = machine.commitSucceeded([1])
        #expect(wakesApplier)
        // The apply thread takes batch 1 while the commit thread commits the next ones.
        #expect(Self.apply(machine.nextApply())?.batch == [1])
        let limit = Machine.committedLimit
        for request in 2...(limit + 1) {
            enqueued = machine.enqueue(request)
            #expect(enqueued == .none, "the commit thread is awake")
            #expect(Self.commit(machine.nextCommit()) == [request])
            wakesApplier = machine.commitSucceeded([request])
            #expect(wakesApplier == false, "the apply thread is busy with batch 1")
        }
        // The limit of committed batches waits: the next requests wait too.
        enqueued = machine.enqueue(100)
        #expect(enqueued == .none)
        #expect(Self.isSleep(machine.nextCommit()), "no commit while the limit of committed batches waits")
        enqueued = machine.enqueue(101)
        #expect(enqueued == .none, "still no room: waking it would be useless")
        // The apply thread finishes batch 1, takes batch 2, and wakes the commit thread.
        let next = Self.apply(machine.nextApply())
        #expect(next?.batch == [2] && next?.wakeCommitter == true)
        #expect(Self.commit(machine.nextCommit()) == [100, 101])
        wakesApplier = machine.commitSucceeded([100, 101])
        #expect(wakesApplier == false)
        // In commit order.
        for request in 3...(limit + 1) { #expect(Self.apply(machine.nextApply())?.batch == [request]) }
        #expect(Self.apply(machine.nextApply())?.batch == [100, 101])
        #expect(Self.isSleep(machine.nextApply()))
        #expect(machine.commitCount == limit + 2)
    }

    @Test("a failed commit fails exactly its requests and applies nothing; the requests after it commit")
    func failedCommit() {
        var machine = Self.idle()
        let wakesApplier: Bool
        let enqueued: Machine.EnqueueAction
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        enqueued = machine.enqueue(3)
        #expect(enqueued == .none)
        let failed = machine.commitFailed([1, 2])
        #expect(failed.fail == [1, 2] && failed.wakeApplier == false)
        #expect(Self.isSleep(machine.nextApply()), "nothing of a failed commit is applied")
        #expect(Self.commit(machine.nextCommit()) == [3])
        wakesApplier = machine.commitSucceeded([3])
        #expect(wakesApplier)
        #expect(Self.apply(machine.nextApply())?.batch == [3])
        #expect(machine.commitCount == 2)
    }

    @Test("close fails the requests waiting, not the commit in flight, which is still applied; then both threads stop")
    func closeWhileRequestsWait() {
        var machine = Self.idle()
        let closing: Machine.CloseAction?
        let wakesApplier: Bool
        let enqueued: Machine.EnqueueAction
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        _ = machine.enqueue(2)
        _ = machine.enqueue(3)
        let close = machine.close()
        #expect(close?.fail == [2, 3])
        #expect(close?.wakeCommitter == false, "it is committing")
        #expect(close?.wakeApplier == true, "it sleeps; woken, it finds a commit in flight and sleeps again")
        #expect(Self.isSleep(machine.nextApply()))
        enqueued = machine.enqueue(4)
        #expect(enqueued == .refuse)
        wakesApplier = machine.commitSucceeded([1])
        #expect(wakesApplier, "the apply thread is woken for the last batch")
        guard case .stop = machine.nextCommit() else {
            Issue.record("the commit thread did not stop")
            return
        }
        #expect(Self.apply(machine.nextApply())?.batch == [1])
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
        closing = machine.close()
        #expect(closing == nil, "closing again does nothing")
    }

    @Test("close of an idle machine wakes both threads, which stop")
    func closeIdle() {
        var machine = Self.idle()
        let close = machine.close()
        #expect(close?.fail == [] && close?.wakeCommitter == true && close?.wakeApplier == true)
        guard case .stop(let wakeApplier) = machine.nextCommit() else {
            Issue.record("the commit thread did not stop")
            return
        }
        #expect(wakeApplier == false, "already woken by close")
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    @Test("a commit that fails after close wakes the sleeping apply thread so that it stops")
    func failureAfterClose() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.nextCommit()
        _ = machine.close()
        #expect(Self.isSleep(machine.nextApply()))
        let failed = machine.commitFailed([1])
        #expect(failed.fail == [1] && failed.wakeApplier == true)
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    // MARK: Whoever commits a batch may apply it

    @Test("the commit thread applies its batch itself when nothing is queued and nothing else is applied")
    func commitThreadApplies() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        #expect(machine.committed([1, 2], mayApply: true) == .applyHere(wakeCommitter: false))
        // Callers come back while it applies: they queue for it, nobody is woken.
        #expect(machine.enqueue(3) == .none)
        #expect(machine.appliedHere() == false, "the apply thread has nothing to do")
        #expect(Self.isGather(machine.nextCommit()), "one of the two came back")
        #expect(machine.enqueue(4) == .wakeCommitter)
        #expect(Self.commit(machine.nextCommit()) == [3, 4])
        // Requests queued during the commit: the commit thread goes on committing, the apply
        // thread applies.
        #expect(machine.enqueue(5) == .none)
        #expect(machine.committed([3, 4], mayApply: true) == .handOff(wakeApplier: true, wakeCommitter: false))
        #expect(Self.apply(machine.nextApply())?.batch == [3, 4])
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [5])
        // A batch committed while another is applied is handed off too, in order.
        #expect(machine.committed([5], mayApply: true) == .handOff(wakeApplier: false, wakeCommitter: false))
        #expect(Self.apply(machine.nextApply())?.batch == [5])
        #expect(Self.isSleep(machine.nextApply()))
        #expect(machine.commitCount == 3)
    }

    @Test("after applying a batch of several callers itself, the commit thread gathers before any is back")
    func commitThreadGathersItsCallers() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        #expect(machine.committed([1, 2], mayApply: true) == .applyHere(wakeCommitter: false))
        #expect(machine.appliedHere() == false)
        #expect(Self.isGather(machine.nextCommit()), "its callers are coming back")
        #expect(machine.enqueue(3, callerMayCommit: true) == .none, "one of two is back")
        #expect(machine.enqueue(4) == .wakeCommitter, "both are back")
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [3, 4])
        // Nobody comes back in the window: it sleeps, once.
        #expect(machine.committed([3, 4], mayApply: true) == .applyHere(wakeCommitter: false))
        #expect(machine.appliedHere() == false)
        #expect(Self.isGather(machine.nextCommit()))
        #expect(Self.isSleep(machine.nextCommit(gathered: true)))
        #expect(machine.enqueue(5) == .wakeCommitter)
    }

    @Test("a batch applied by its committer holds back the apply thread until it is done")
    func applyThreadWaitsForCommitter() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        #expect(machine.committed([1], mayApply: true) == .applyHere(wakeCommitter: false))
        // A caller commits batch 2 meanwhile (the last commit carried one request).
        #expect(machine.enqueue(2, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([2], mayApply: true) == .handOff(wakeApplier: false, wakeCommitter: false))
        #expect(Self.isSleep(machine.nextApply()), "batch 2 waits for batch 1")
        #expect(machine.appliedHere() == true)
        #expect(Self.apply(machine.nextApply())?.batch == [2])
    }

    // MARK: A blocking caller commits its own request

    @Test("an idle machine lets a blocking caller commit and apply its own request, waking no thread")
    func callerCommitsAlone() {
        var machine = Self.idle()
        let enqueued = machine.enqueue(1, callerMayCommit: true)
        #expect(enqueued == .commitHere)
        #expect(machine.waitingCount == 0, "the caller's request is not queued")
        let committed = machine.committed([1], mayApply: true)
        #expect(committed == .applyHere(wakeCommitter: false))
        let wakesApplier = machine.appliedHere()
        #expect(wakesApplier == false, "nothing else to apply")
        #expect(machine.commitCount == 1)
        // The next lone caller does the same.
        #expect(machine.enqueue(2, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([2], mayApply: true) == .applyHere(wakeCommitter: false))
        #expect(machine.appliedHere() == false)
        #expect(machine.commitCount == 2)
    }

    @Test("a caller that may not block is queued even when the machine is idle")
    func asyncCallerQueues() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: false) == .wakeCommitter)
        #expect(machine.enqueue(2, callerMayCommit: true) == .none, "queued behind the first: order holds")
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
    }

    @Test("after a commit of several requests, a blocking caller queues, so that the commit thread gathers the others")
    func callerQueuesAfterGroupCommit() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        _ = machine.enqueue(3)
        #expect(Self.commit(machine.nextCommit()) == [1, 2, 3])
        _ = machine.commitSucceeded([1, 2, 3])
        #expect(Self.isSleep(machine.nextCommit()))
        #expect(machine.enqueue(4, callerMayCommit: true) == .wakeCommitter, "three callers committed together")
        #expect(Self.isGather(machine.nextCommit()))
        #expect(machine.enqueue(5, callerMayCommit: true) == .none)
        #expect(machine.enqueue(6, callerMayCommit: true) == .wakeCommitter)
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [4, 5, 6])
        _ = machine.commitSucceeded([4, 5, 6])
        // Once a commit carries one request again, a lone caller commits its own.
        #expect(machine.enqueue(7, callerMayCommit: true) == .none, "the commit thread is awake")
        #expect(Self.isGather(machine.nextCommit()))
        #expect(Self.commit(machine.nextCommit(gathered: true)) == [7], "nobody else came back in the window")
        _ = machine.commitSucceeded([7])
        #expect(Self.isSleep(machine.nextCommit()))
        #expect(machine.enqueue(8, callerMayCommit: true) == .commitHere)
    }

    @Test("requests arriving during a caller's commit queue, and the commit thread is woken for them when it ends")
    func requestsDuringCallerCommit() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        #expect(machine.enqueue(2) == .none, "the caller wakes the commit thread when its commit ends")
        #expect(machine.enqueue(3, callerMayCommit: true) == .none, "one commit at a time")
        #expect(machine.waitingCount == 2)
        #expect(machine.committed([1], mayApply: true) == .applyHere(wakeCommitter: true))
        #expect(Self.commit(machine.nextCommit()) == [2, 3])
        let wakesApplier = machine.commitSucceeded([2, 3])
        #expect(wakesApplier == false, "the caller applies batch 1 and wakes the apply thread after")
        #expect(Self.isSleep(machine.nextApply()), "batch 2 waits for batch 1")
        #expect(machine.appliedHere() == true)
        #expect(Self.apply(machine.nextApply())?.batch == [2, 3])
        #expect(Self.isSleep(machine.nextApply()))
        #expect(machine.commitCount == 2)
    }

    @Test("a commit thread woken during a caller's commit sleeps again and commits nothing")
    func commitThreadDuringCallerCommit() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        #expect(Self.isSleep(machine.nextCommit()))
        _ = machine.enqueue(2)
        #expect(Self.isSleep(machine.nextCommit()), "still the caller's commit")
        #expect(machine.committed([1], mayApply: true) == .applyHere(wakeCommitter: true))
        #expect(Self.commit(machine.nextCommit()) == [2])
    }

    @Test("a caller hands its batch to the apply thread when another is applied, or when it wants no updates")
    func callerHandsOff() {
        var machine = Self.idle()
        // Batch 1 through the threads; the apply thread is applying it.
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        _ = machine.commitSucceeded([1])
        #expect(Self.isSleep(machine.nextCommit()))
        #expect(Self.apply(machine.nextApply())?.batch == [1])
        // The commit thread is idle: a caller commits batch 2 itself, during batch 1's apply.
        #expect(machine.enqueue(2, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([2], mayApply: true) == .handOff(wakeApplier: false, wakeCommitter: false))
        #expect(Self.apply(machine.nextApply())?.batch == [2], "in commit order")
        #expect(Self.isSleep(machine.nextApply()))
        // A bulk caller leaves the apply to the apply thread even when it is idle, and so
        // prepares its next batch meanwhile.
        #expect(machine.enqueue(3, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([3], mayApply: false) == .handOff(wakeApplier: true, wakeCommitter: false))
        #expect(Self.apply(machine.nextApply())?.batch == [3])
        #expect(machine.commitCount == 3)
    }

    @Test("a caller's failed commit applies nothing and wakes the commit thread for the requests behind it")
    func callerCommitFails() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.enqueue(2)
        let wakes = machine.callerCommitFailed()
        #expect(wakes.wakeCommitter == true && wakes.wakeApplier == false)
        #expect(Self.isSleep(machine.nextApply()), "nothing of a failed commit is applied")
        #expect(Self.commit(machine.nextCommit()) == [2])
        #expect(machine.commitSucceeded([2]) == true)
        #expect(Self.apply(machine.nextApply())?.batch == [2])
        #expect(machine.commitCount == 2)
    }

    @Test("close during a caller's commit: the queued fail, the commit thread stops, the apply thread stops after the caller")
    func closeDuringCallerCommit() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.enqueue(2)
        let close = machine.close()
        #expect(close?.fail == [2] && close?.wakeCommitter == true && close?.wakeApplier == true)
        #expect(machine.enqueue(3, callerMayCommit: true) == .refuse)
        guard case .stop(let wakeApplier) = machine.nextCommit() else {
            Issue.record("the commit thread did not stop")
            return
        }
        #expect(wakeApplier == false, "already woken by close")
        #expect(Self.isSleep(machine.nextApply()), "the caller's commit is in flight")
        #expect(machine.committed([1], mayApply: true) == .applyHere(wakeCommitter: false))
        #expect(Self.isSleep(machine.nextApply()), "the caller applies its batch")
        #expect(machine.appliedHere() == true, "the apply thread is woken to stop")
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    @Test("a caller's commit that fails after close wakes the sleeping apply thread so that it stops")
    func callerFailureAfterClose() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.close()
        #expect(Self.isSleep(machine.nextApply()))
        let wakes = machine.callerCommitFailed()
        #expect(wakes.wakeApplier == true)
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }
}

extension AppendMachine {
    /// The commit thread's batch is durable and handed to the apply thread (as a bulk batch
    /// is); returns whether to wake the apply thread.
    mutating func commitSucceeded(_ batch: Batch) -> Bool {
        guard case .handOff(let wakeApplier, let wakeCommitter) = committed(batch, mayApply: false) else {
            preconditionFailure("a batch that may not be applied here was applied here")
        }
        precondition(!wakeCommitter, "the commit thread was told to wake itself")
        return wakeApplier
    }
}
