import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The write path's decisions, driven by hand: no threads, no LMDB. Requests are plain
/// numbers and a committed batch is the list of the requests it holds.
@Suite("Append state machine")
struct AppendMachineTests {
    typealias Machine = AppendMachine<Int, [Int]>

    /// A machine whose two threads have started and wait.
    static func idle() -> Machine {
        var machine = Machine()
        guard case .wait = machine.nextCommit(), case .wait = machine.nextApply() else {
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

    /// The batch of an `.apply` action, or nil.
    static func apply(_ action: Machine.ApplyAction) -> [Int]? {
        if case .apply(let batch) = action { return batch }
        return nil
    }

    static func isWait(_ action: Machine.CommitAction) -> Bool {
        if case .wait = action { return true }
        return false
    }

    static func isWait(_ action: Machine.ApplyAction) -> Bool {
        if case .wait = action { return true }
        return false
    }

    static func isStop(_ action: Machine.CommitAction) -> Bool {
        if case .stop = action { return true }
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

    @Test("a request gives the waiting commit thread work; it commits it, then the apply thread applies it")
    func oneRequest() {
        var machine = Self.idle()
        #expect(!machine.commitThreadHasWork && !machine.applyThreadHasWork)
        #expect(machine.enqueue(1) == .queued)
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [1])
        #expect(!machine.commitThreadHasWork, "it is committing")
        #expect(!machine.applyThreadHasWork, "nothing is committed yet")
        #expect(machine.commitSucceeded([1]) == .commitThreadCommitsApplyThreadApplies)
        #expect(machine.applyThreadHasWork)
        #expect(Self.apply(machine.nextApply()) == [1])
        #expect(!machine.applyThreadHasWork)
        #expect(Self.isWait(machine.nextApply()))
        #expect(Self.isWait(machine.nextCommit()))
        #expect(machine.commitCount == 1)
    }

    @Test("requests queued while a commit runs give nobody work and make the next commit, together, in order")
    func queueingDuringCommit() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        for request in 2...4 {
            #expect(machine.enqueue(request) == .queued)
            #expect(!machine.commitThreadHasWork, "the commit thread is committing")
        }
        _ = machine.commitSucceeded([1])
        #expect(machine.commitThreadHasWork && machine.applyThreadHasWork)
        #expect(Self.apply(machine.nextApply()) == [1])
        #expect(Self.commit(machine.nextCommit()) == [2, 3, 4], "one commit for everything queued meanwhile")
        _ = machine.commitSucceeded([2, 3, 4])
        #expect(Self.apply(machine.nextApply()) == [2, 3, 4])
    }

    @Test("callers coming back after their answers are gathered into one commit, or the window ends the wait")
    func gathering() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        _ = machine.enqueue(3)
        #expect(Self.commit(machine.nextCommit()) == [1, 2, 3])
        _ = machine.commitSucceeded([1, 2, 3])
        #expect(Self.isWait(machine.nextCommit()))
        #expect(Self.apply(machine.nextApply()) == [1, 2, 3])
        // The three callers come back one by one: the first gives the commit thread work,
        // which gathers; the third, as many as the last commit carried, gives it work again.
        _ = machine.enqueue(4)
        #expect(machine.commitThreadHasWork)
        #expect(Self.isGather(machine.nextCommit()), "one request of three back")
        #expect(machine.commitStage == .gathering)
        _ = machine.enqueue(5)
        #expect(!machine.commitThreadHasWork, "still gathering")
        #expect(Self.isGather(machine.nextCommit()), "woken early for nothing, it gathers on")
        _ = machine.enqueue(6)
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [4, 5, 6])
        _ = machine.commitSucceeded([4, 5, 6])
        #expect(Self.apply(machine.nextApply()) == [4, 5, 6])
        // Only one comes back: the window closes and it commits alone; then no more gathering.
        #expect(Self.isWait(machine.nextCommit()))
        _ = machine.enqueue(7)
        #expect(Self.isGather(machine.nextCommit()))
        #expect(Self.commit(machine.nextCommit(windowClosed: true)) == [7])
        _ = machine.commitSucceeded([7])
        _ = machine.enqueue(8)
        #expect(Self.commit(machine.nextCommit()) == [8], "the last commit carried one: no gather")
        // Close while gathering: the commit thread has work (stopping) once the queue is failed.
        _ = machine.commitSucceeded([8])
        _ = machine.enqueue(9)
        _ = machine.enqueue(10)
        #expect(Self.commit(machine.nextCommit()) == [9, 10])
        _ = machine.commitSucceeded([9, 10])
        _ = machine.enqueue(11)
        #expect(Self.isGather(machine.nextCommit()))
        #expect(!machine.commitThreadHasWork)
        #expect(machine.close() == [11])
        #expect(machine.commitThreadHasWork)
        #expect(Self.isStop(machine.nextCommit()))
    }

    @Test("batch N is applied while later ones commit; once the limit of batches waits, requests wait until one is taken")
    func pipelining() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.nextCommit()
        _ = machine.commitSucceeded([1])
        // The apply thread takes batch 1 while the commit thread commits the next ones.
        #expect(Self.apply(machine.nextApply()) == [1])
        let limit = Machine.committedLimit
        for request in 2...(limit + 1) {
            _ = machine.enqueue(request)
            #expect(Self.commit(machine.nextCommit()) == [request])
            _ = machine.commitSucceeded([request])
            #expect(!machine.applyThreadHasWork, "the apply thread is busy with batch 1")
        }
        // The limit of committed batches waits: the next requests wait too.
        _ = machine.enqueue(100)
        #expect(!machine.commitThreadHasWork, "no room: waking it would be useless")
        #expect(Self.isWait(machine.nextCommit()), "no commit while the limit of committed batches waits")
        _ = machine.enqueue(101)
        #expect(!machine.commitThreadHasWork)
        // The apply thread finishes batch 1 and takes batch 2, which makes room.
        #expect(Self.apply(machine.nextApply()) == [2])
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [100, 101])
        _ = machine.commitSucceeded([100, 101])
        // In commit order.
        for request in 3...(limit + 1) { #expect(Self.apply(machine.nextApply()) == [request]) }
        #expect(Self.apply(machine.nextApply()) == [100, 101])
        #expect(Self.isWait(machine.nextApply()))
        #expect(machine.commitCount == limit + 2)
    }

    @Test("a failed commit applies nothing; the requests after it commit")
    func failedCommit() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        _ = machine.enqueue(3)
        machine.commitFailed()
        #expect(!machine.applyThreadHasWork)
        #expect(Self.isWait(machine.nextApply()), "nothing of a failed commit is applied")
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [3], "no gather after a failed commit: its callers are not coming back")
        _ = machine.commitSucceeded([3])
        #expect(Self.apply(machine.nextApply()) == [3])
        #expect(machine.commitCount == 2)
    }

    @Test("close fails the requests waiting, not the commit in flight, which is still applied; then both threads stop")
    func closeWhileRequestsWait() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        _ = machine.enqueue(2)
        _ = machine.enqueue(3)
        #expect(machine.close() == [2, 3])
        #expect(!machine.applyThreadHasWork, "a commit is in flight")
        #expect(Self.isWait(machine.nextApply()))
        #expect(machine.enqueue(4) == .refuse)
        _ = machine.commitSucceeded([1])
        #expect(machine.applyThreadHasWork, "the last batch")
        #expect(Self.isStop(machine.nextCommit()))
        #expect(Self.apply(machine.nextApply()) == [1])
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
        #expect(machine.close() == nil, "closing again does nothing")
    }

    @Test("close of an idle machine gives both threads work: they stop")
    func closeIdle() {
        var machine = Self.idle()
        #expect(machine.close() == [])
        #expect(machine.commitThreadHasWork && machine.applyThreadHasWork)
        #expect(Self.isStop(machine.nextCommit()))
        #expect(Self.isStop(machine.nextApply()))
    }

    @Test("a commit that fails after close lets the apply thread stop")
    func failureAfterClose() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.nextCommit()
        _ = machine.close()
        #expect(Self.isWait(machine.nextApply()))
        machine.commitFailed()
        #expect(machine.applyThreadHasWork)
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    // MARK: Routes: whoever commits a batch may apply it

    @Test("the commit thread applies its batch itself when nothing is queued and nothing else is applied")
    func commitThreadApplies() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        #expect(machine.committed([1, 2], mayApply: true) == .commitThreadCommitsAndApplies)
        #expect(machine.applyStage == .applying(by: .committer))
        // Callers come back while it applies: they queue for it.
        #expect(machine.enqueue(3) == .queued)
        #expect(!machine.applyThreadHasWork)
        machine.appliedHere()
        #expect(!machine.applyThreadHasWork, "the apply thread has nothing to do")
        #expect(Self.isGather(machine.nextCommit()), "one of the two came back")
        _ = machine.enqueue(4)
        #expect(machine.commitThreadHasWork, "both are back")
        #expect(Self.commit(machine.nextCommit()) == [3, 4])
        // Requests queued during the commit: the commit thread goes on committing, the apply
        // thread applies.
        _ = machine.enqueue(5)
        #expect(machine.committed([3, 4], mayApply: true) == .commitThreadCommitsApplyThreadApplies)
        #expect(machine.applyThreadHasWork)
        #expect(Self.apply(machine.nextApply()) == [3, 4])
        #expect(Self.commit(machine.nextCommit(windowClosed: true)) == [5])
        // A batch committed while another is applied is handed off too, in order.
        #expect(machine.committed([5], mayApply: true) == .commitThreadCommitsApplyThreadApplies)
        #expect(Self.apply(machine.nextApply()) == [5])
        #expect(Self.isWait(machine.nextApply()))
        #expect(machine.commitCount == 3)
    }

    @Test("after applying a batch of several callers itself, the commit thread gathers before any is back")
    func commitThreadGathersItsCallers() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        #expect(Self.commit(machine.nextCommit()) == [1, 2])
        #expect(machine.committed([1, 2], mayApply: true) == .commitThreadCommitsAndApplies)
        machine.appliedHere()
        #expect(Self.isGather(machine.nextCommit()), "its callers are coming back")
        #expect(machine.enqueue(3, callerMayCommit: true) == .queued, "one of two is back: the commit thread gathers, not the caller")
        #expect(!machine.commitThreadHasWork)
        _ = machine.enqueue(4)
        #expect(machine.commitThreadHasWork, "both are back")
        #expect(Self.commit(machine.nextCommit()) == [3, 4])
        // Nobody comes back in the window: it waits, once.
        #expect(machine.committed([3, 4], mayApply: true) == .commitThreadCommitsAndApplies)
        machine.appliedHere()
        #expect(Self.isGather(machine.nextCommit()))
        #expect(Self.isWait(machine.nextCommit(windowClosed: true)))
        #expect(machine.commitStage == .idle)
        _ = machine.enqueue(5)
        #expect(machine.commitThreadHasWork)
    }

    @Test("a batch applied by its committer holds back the apply thread until it is done")
    func applyThreadWaitsForCommitter() {
        var machine = Self.idle()
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        #expect(machine.committed([1], mayApply: true) == .commitThreadCommitsAndApplies)
        // A caller comes meanwhile (the last commit carried one request): it may not apply
        // before batch 1 is, so it queues.
        #expect(machine.enqueue(2, callerMayCommit: true) == .queued)
        #expect(Self.isWait(machine.nextApply()), "batch 1 is its committer's")
        machine.appliedHere()
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [2])
        #expect(machine.committed([2], mayApply: true) == .commitThreadCommitsAndApplies)
        machine.appliedHere()
        #expect(Self.isWait(machine.nextApply()))
    }

    // MARK: A blocking caller commits its own request

    @Test("an idle machine lets a blocking caller commit and apply its own request, giving no thread work")
    func callerCommitsAlone() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        #expect(machine.waitingCount == 0, "the caller's request is not queued")
        #expect(machine.commitStage == .committing(by: .caller, size: 1))
        #expect(!machine.commitThreadHasWork && !machine.applyThreadHasWork)
        #expect(machine.committed([1], mayApply: true) == .callerCommitsAndApplies)
        machine.appliedHere()
        #expect(!machine.commitThreadHasWork && !machine.applyThreadHasWork, "nothing else to do")
        #expect(machine.commitCount == 1)
        // The next lone caller does the same.
        #expect(machine.enqueue(2, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([2], mayApply: true) == .callerCommitsAndApplies)
        machine.appliedHere()
        #expect(machine.commitCount == 2)
    }

    @Test("a caller that may not block is queued even when the machine is idle")
    func asyncCallerQueues() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: false) == .queued)
        #expect(machine.enqueue(2, callerMayCommit: true) == .queued, "queued behind the first: order holds")
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
        #expect(Self.isWait(machine.nextCommit()))
        #expect(machine.enqueue(4, callerMayCommit: true) == .queued, "three callers committed together")
        #expect(Self.isGather(machine.nextCommit()))
        _ = machine.enqueue(5, callerMayCommit: true)
        _ = machine.enqueue(6, callerMayCommit: true)
        #expect(Self.commit(machine.nextCommit()) == [4, 5, 6])
        _ = machine.commitSucceeded([4, 5, 6])
        // Once a commit carries one request again, a lone caller commits its own.
        #expect(machine.enqueue(7, callerMayCommit: true) == .queued, "the last commit carried three")
        #expect(Self.isGather(machine.nextCommit()))
        #expect(Self.commit(machine.nextCommit(windowClosed: true)) == [7], "nobody else came back in the window")
        _ = machine.commitSucceeded([7])
        #expect(Self.isWait(machine.nextCommit()))
        #expect(machine.enqueue(8, callerMayCommit: true) == .queued, "batches wait for the apply thread")
        #expect(Self.commit(machine.nextCommit()) == [8])
        _ = machine.commitSucceeded([8])
        while Self.apply(machine.nextApply()) != nil {}
        #expect(machine.enqueue(9, callerMayCommit: true) == .commitHere, "all applied, the last commit carried one")
    }

    @Test("requests arriving during a caller's commit queue, and the commit thread has work once it ends")
    func requestsDuringCallerCommit() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        #expect(machine.enqueue(2) == .queued)
        #expect(machine.enqueue(3, callerMayCommit: true) == .queued, "one commit at a time")
        #expect(!machine.commitThreadHasWork, "the caller's commit holds the stage")
        #expect(Self.isWait(machine.nextCommit()), "woken meanwhile, it waits again and commits nothing")
        #expect(machine.waitingCount == 2)
        #expect(machine.committed([1], mayApply: true) == .callerCommitsAndApplies)
        #expect(machine.commitThreadHasWork)
        #expect(Self.commit(machine.nextCommit()) == [2, 3])
        _ = machine.commitSucceeded([2, 3])
        #expect(!machine.applyThreadHasWork, "the caller applies batch 1 first")
        #expect(Self.isWait(machine.nextApply()), "batch 2 waits for batch 1")
        machine.appliedHere()
        #expect(machine.applyThreadHasWork)
        #expect(Self.apply(machine.nextApply()) == [2, 3])
        #expect(Self.isWait(machine.nextApply()))
        #expect(machine.commitCount == 2)
    }

    @Test("a caller queues when a batch is applied or waits to be, so that it never commits what it may not apply")
    func callerQueuesBehindApply() {
        var machine = Self.idle()
        // Batch 1 through the threads; the apply thread is applying it.
        _ = machine.enqueue(1)
        #expect(Self.commit(machine.nextCommit()) == [1])
        _ = machine.commitSucceeded([1])
        #expect(Self.isWait(machine.nextCommit()))
        #expect(machine.enqueue(2, callerMayCommit: true) == .queued, "batch 1 waits for the apply thread")
        #expect(Self.apply(machine.nextApply()) == [1])
        #expect(Self.commit(machine.nextCommit()) == [2])
        _ = machine.commitSucceeded([2])
        #expect(machine.enqueue(3, callerMayCommit: true) == .queued, "batch 2 waits")
        #expect(Self.apply(machine.nextApply()) == [2], "in commit order")
        #expect(Self.commit(machine.nextCommit()) == [3])
        _ = machine.commitSucceeded([3])
        #expect(Self.apply(machine.nextApply()) == [3])
        // Once the apply thread has asked again, all is idle: a caller commits its own.
        #expect(Self.isWait(machine.nextApply()))
        #expect(machine.enqueue(4, callerMayCommit: true) == .commitHere)
        #expect(machine.committed([4], mayApply: true) == .callerCommitsAndApplies)
        machine.appliedHere()
        #expect(machine.commitCount == 4)
    }

    @Test("a caller's failed commit applies nothing and gives the commit thread the requests behind it")
    func callerCommitFails() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.enqueue(2)
        machine.commitFailed()
        #expect(machine.commitThreadHasWork && !machine.applyThreadHasWork)
        #expect(Self.isWait(machine.nextApply()), "nothing of a failed commit is applied")
        #expect(Self.commit(machine.nextCommit()) == [2])
        _ = machine.commitSucceeded([2])
        #expect(Self.apply(machine.nextApply()) == [2])
        #expect(machine.commitCount == 2)
    }

    @Test("close during a caller's commit: the queued fail, the commit thread stops, the apply thread stops after the caller")
    func closeDuringCallerCommit() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.enqueue(2)
        #expect(machine.close() == [2])
        #expect(machine.enqueue(3, callerMayCommit: true) == .refuse)
        #expect(machine.commitThreadHasWork)
        #expect(Self.isStop(machine.nextCommit()))
        #expect(!machine.applyThreadHasWork, "the caller's commit is in flight")
        #expect(machine.committed([1], mayApply: true) == .callerCommitsAndApplies)
        #expect(Self.isWait(machine.nextApply()), "the caller applies its batch")
        machine.appliedHere()
        #expect(machine.applyThreadHasWork)
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    @Test("a caller's commit that fails after close lets the apply thread stop")
    func callerFailureAfterClose() {
        var machine = Self.idle()
        #expect(machine.enqueue(1, callerMayCommit: true) == .commitHere)
        _ = machine.close()
        #expect(Self.isWait(machine.nextApply()))
        machine.commitFailed()
        #expect(machine.applyThreadHasWork)
        #expect(Self.isStop(machine.nextApply()), "the apply thread stops")
    }

    @Test("whenever a thread is told to wait, the machine says it has no work: no signal can be owed")
    func waitMeansNoWork() {
        // Drive a machine through a long mixed sequence, and after every wait check the query
        // that decides the signals agrees.
        var machine = Self.idle()
        var generator = SplitMix64(seed: 41)
        var next = 1
        var inFlight: [Int]?
        var callerInFlight = false
        var appliedHereInFlight = false
        for _ in 0..<5_000 {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0, 1:
                if machine.enqueue(next, callerMayCommit: Bool.random(using: &generator)) == .commitHere {
                    if callerInFlight || inFlight != nil { Issue.record("two commits at once") }
                    callerInFlight = true
                }
                next += 1
            case 2:
                guard inFlight == nil && !callerInFlight else { break }
                switch machine.nextCommit(windowClosed: Bool.random(using: &generator)) {
                case .commit(let requests): inFlight = requests
                case .wait, .gather: #expect(!machine.commitThreadHasWork)
                case .stop: Issue.record("stopped before close")
                }
            case 3:
                guard !appliedHereInFlight else { break }
                if callerInFlight {
                    callerInFlight = false
                    appliedHereInFlight = machine.committed([0], mayApply: true).appliesHere
                } else if let requests = inFlight {
                    inFlight = nil
                    if Bool.random(using: &generator) {
                        appliedHereInFlight = machine.committed(requests, mayApply: true).appliesHere
                    } else {
                        machine.commitFailed()
                    }
                }
            case 4:
                if appliedHereInFlight {
                    machine.appliedHere()
                    appliedHereInFlight = false
                }
            default:
                if case .wait = machine.nextApply() { #expect(!machine.applyThreadHasWork) }
            }
        }
    }
}

extension AppendMachine {
    /// The commit thread's batch is durable and handed to the apply thread (as a bulk batch
    /// is); returns its route.
    mutating func commitSucceeded(_ batch: Batch) -> Route {
        let route = committed(batch, mayApply: false)
        precondition(!route.appliesHere, "a batch that may not be applied here was applied here")
        return route
    }
}
