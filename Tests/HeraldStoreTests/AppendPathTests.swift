import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldStore

/// The write path through a real store: the commit thread and the apply thread, requests
/// waiting behind a commit held in flight (by the commit fault hook), close, and the rule that
/// the projection is never ahead of the durable log.
@Suite("Append path: commit and apply threads")
struct AppendPathTests {
    static func note(_ id: Int) -> Event {
        Event(account: "a", .note(source: "test", reason: "\(id)"))
    }

    /// Waits (polling, at most 10 s) until `condition` holds; returns whether it did.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Waits (suspended, at most 60 s) until `condition` holds; returns whether it did. Its
    /// caller runs on ``executor``, so tests that block the cooperative pool cannot starve it.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Runs `body` on a thread of its own; the returned semaphore is signalled when it is done.
    static func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done
    }

    @Test("a read-only store starts no threads; a writable one stops them at close, and close is idempotent")
    func threadsLifecycle() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        #expect(store.appendThreads.isRunning)
        try store.append(Self.note(1))
        var readOnly = Store.Options()
        readOnly.readOnly = true
        let reader = try Store(path: dir.path, options: readOnly)
        #expect(!reader.appendThreads.isRunning)
        #expect(throws: StoreError.self) { try reader.append(Self.note(2)) }
        store.close()
        #expect(!store.appendThreads.isRunning)
        store.close()
        #expect(throws: StoreError.self) { try store.append(Self.note(2)) }
        #expect(try reader.history.bounds().lastSeqInLog == 1)
    }

    @Test("close releases the writer lock and the environment: the directory opens again at once, in this process")
    func closeThenReopen() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(Self.note(1))
        store.close()
        // `store` is still referenced: close alone must let go of the lock and the log.
        let error = #expect(throws: StoreError.self) { _ = try store.history.bounds() }
        #expect(error?.code == .closed && error?.path == dir.path, "the log is no longer read")
        #expect(store.lastSeq == 1, "the in-memory state stays readable")
        let reopened = try Store(path: dir.path)
        #expect(try reopened.append(Self.note(2)).seq == 2)
        #expect(try reopened.history.records().map(\.seq) == [1, 2])
        reopened.close()
        withExtendedLifetime(store) {}
    }

    @Test("a lone synchronous caller commits on its own thread; async callers never do")
    func loneCallerCommitsItself() async throws {
        let dir = TemporaryDirectory()
        let committers = Mutex<[pthread_t]>([])
        var options = Store.Options()
        options.commitFault = { committers.withLock { $0.append(pthread_self()) } }
        let store = try Store(path: dir.path, options: options)
        let caller = Mutex<pthread_t?>(nil)
        let done = Self.onThread {
            caller.withLock { $0 = pthread_self() }
            for id in 1...3 { _ = try? store.append(Self.note(id)) }
        }
        done.wait()
        let callerThread = try #require(caller.withLock { $0 })
        let synchronous = committers.withLock { $0 }
        #expect(synchronous.count == 3)
        #expect(synchronous.allSatisfy { pthread_equal($0, callerThread) != 0 }, "each commit ran on the caller's thread")
        #expect(store.lastSeq == 3)
        // An async append suspends: the commit thread writes it.
        try await store.append(Self.note(4))
        let all = committers.withLock { $0 }
        #expect(all.count == 4 && pthread_equal(all[3], callerThread) == 0)
        #expect(store.lastSeq == 4)
        #expect(try await store.history.records().map(\.event) == (1...4).map(Self.note))
    }

    @Test("close fails the appends waiting behind a commit with the closed error; the commit in flight is durable and applied")
    func closeWhileRequestsWait() throws {
        let dir = TemporaryDirectory()
        let hold = CommitHold()
        var options = Store.Options()
        options.commitFault = { try hold.pass() }
        let store = try Store(path: dir.path, options: options)
        let first = Mutex<Result<Applied, any Error>?>(nil)
        let firstDone = Self.onThread { first.withLock { $0 = Result { try store.append(Self.note(1)) } } }
        #expect(hold.entered.wait(timeout: .now() + 10) == .success, "the first commit did not start")

        let waiting = Mutex<[Result<Applied, any Error>]>([])
        let waitersDone = (2...3).map { id in
            Self.onThread { let result = Result { try store.append(Self.note(id)) }; waiting.withLock { $0.append(result) } }
        }
        #expect(Self.eventually { store.appendThreads.waitingCount == 2 })
        let closeDone = Self.onThread { store.close() }
        // The waiting appends fail while the first commit is still held.
        for done in waitersDone { #expect(done.wait(timeout: .now() + 10) == .success) }
        for result in waiting.withLock({ $0 }) {
            guard case .failure(let error as StoreError) = result, error.code == .closed, error.path == dir.path else {
                Issue.record("a waiting append got \(result), not the closed error")
                continue
            }
        }
        #expect(closeDone.wait(timeout: .now() + 0.05) == .timedOut, "close waits for the commit in flight")
        hold.release()
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        #expect(closeDone.wait(timeout: .now() + 10) == .success)
        #expect(try first.withLock { try $0?.get() }?.seq == 1)
        #expect(store.lastSeq == 1)
        #expect(!store.appendThreads.isRunning)
        #expect(try Store(path: dir.path).history.bounds().lastSeqInLog == 1, "durable, and the directory opens again")
    }

    @Test("a failed commit fails exactly its requests and applies nothing; the appends queued behind it commit")
    func failedCommitFailsItsRequestsOnly() throws {
        let dir = TemporaryDirectory()
        struct DiskFault: Error {}
        let hold = CommitHold(failing: DiskFault())
        var options = Store.Options()
        options.commitFault = { try hold.pass() }
        let store = try Store(path: dir.path, options: options)
        let first = Mutex<Result<[Applied], any Error>?>(nil)
        let firstDone = Self.onThread {
            first.withLock { $0 = Result { try store.append(contentsOf: [(Self.note(1), .library), (Self.note(2), .library)]) } }
        }
        #expect(hold.entered.wait(timeout: .now() + 10) == .success, "the first commit did not start")
        let second = Mutex<Result<Applied, any Error>?>(nil)
        let secondDone = Self.onThread { second.withLock { $0 = Result { try store.append(Self.note(3)) } } }
        #expect(Self.eventually { store.appendThreads.waitingCount == 1 })
        hold.release()
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        #expect(secondDone.wait(timeout: .now() + 10) == .success)
        #expect(throws: DiskFault.self) { try first.withLock { try $0?.get() } }
        let applied = try #require(try second.withLock { try $0?.get() })
        #expect(applied.seq == 1 && applied.event == Self.note(3), "the failed batch took no seqs")
        #expect(store.lastSeq == 1)
        #expect(try store.history.records().map(\.event) == [Self.note(3)])
        var reference = Projection()
        reference.replay(Self.note(3), seq: 1)
        #expect(store.projection == reference)
    }

    /// Two threads of their own for the async test below, so that its tasks run while tests
    /// that block hold the cooperative pool (on two cores they can hold it for minutes).
    static let executor = ThreadExecutor(threads: 2, name: "test.append")

    @Test("async appends suspend: a hundred wait behind a held commit without holding a thread, then commit together")
    func asyncAppendsSuspend() async throws {
        try await withTaskExecutorPreference(Self.executor) { try await asyncAppendsSuspendOnTwoThreads() }
    }

    /// The test itself, on ``executor``'s two threads: 99 appends can queue there only if
    /// each suspends rather than holds a thread.
    private func asyncAppendsSuspendOnTwoThreads() async throws {
        let dir = TemporaryDirectory()
        let hold = CommitHold()
        var options = Store.Options()
        options.commitFault = { try hold.pass() }
        let store = try Store(path: dir.path, options: options)
        // The first append alone is held in its commit; 99 more queue behind it.
        let first = Task(executorPreference: Self.executor) { try await store.append(Self.note(0)).seq }
        let started = await Self.eventually { hold.isHolding }
        try #require(
            started,
            "the first commit did not start (threads running: \(store.appendThreads.isRunning), waiting: \(store.appendThreads.waitingCount), commits: \(store.appendThreads.commitCount))")
        let appends = Task(executorPreference: Self.executor) {
            try await withThrowingTaskGroup(of: UInt64.self) { group in
                for id in 1...99 { group.addTask { try await store.append(Self.note(id)).seq } }
                return try await group.reduce(into: [UInt64]()) { $0.append($1) }
            }
        }
        let queued = await Self.eventually { store.appendThreads.waitingCount == 99 }
        hold.releaseIfNot(queued)
        try #require(queued, "the appends did not queue behind the held commit (waiting: \(store.appendThreads.waitingCount))")
        // Both threads are free: they still run new work.
        #expect(await Task(executorPreference: Self.executor) { 42 }.value == 42)
        hold.release()
        #expect(try await first.value == 1)
        let seqs = try await appends.value
        #expect(Set(seqs) == Set(2...100))
        #expect(store.appendThreads.commitCount == 2, "the held commit, then the 99 that waited, in one")
        #expect(store.lastSeq == 100)
    }

    @Test("the projection is never ahead of the durable log, and each caller reads its own event")
    func neverAheadOfLog() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let producers = 4, perProducer = 150
        let stop = Atomic(false)
        let problems = Mutex<[String]>([])
        let reader = Self.onThread {
            while !stop.load(ordering: .relaxed) {
                let applied = store.lastSeq
                do {
                    let durable = try store.history.bounds().lastSeqInLog
                    if durable < applied { problems.withLock { $0.append("applied \(applied), durable \(durable)") } }
                } catch {
                    problems.withLock { $0.append("\(error)") }
                }
            }
        }
        let writers = (0..<producers).map { p in
            Self.onThread {
                for i in 0..<perProducer {
                    do {
                        let applied = try store.append(Self.note(p * perProducer + i))
                        if store.lastSeq < applied.seq { problems.withLock { $0.append("seq \(applied.seq) not applied on return") } }
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        for writer in writers { writer.wait() }
        stop.store(true, ordering: .relaxed)
        reader.wait()
        #expect(problems.withLock { $0 } == [])
        #expect(store.lastSeq == UInt64(producers * perProducer))
    }
}

/// A commit fault hook that holds the first commit until ``release()`` (at most 60 s), then
/// lets it through or fails it with `failing`; later commits pass.
private final class CommitHold: Sendable {
    /// Signalled when the first commit reaches the hook.
    let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let calls = Mutex(0)
    private let failing: (any Error & Sendable)?

    init(failing: (any Error & Sendable)? = nil) { self.failing = failing }

    /// Whether the first commit reached the hook.
    var isHolding: Bool { calls.withLock { $0 >= 1 } }

    func pass() throws {
        let first = calls.withLock { calls in
            calls += 1
            return calls == 1
        }
        guard first else { return }
        entered.signal()
        _ = gate.wait(timeout: .now() + 60)
        if let failing { throw failing }
    }

    func release() { gate.signal() }

    /// Releases the held commit when `condition` is false (a test about to fail).
    func releaseIfNot(_ condition: Bool) { if !condition { release() } }
}
