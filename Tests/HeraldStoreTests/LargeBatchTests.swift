import Foundation
import HeraldEvents
import HeraldProjection
import Synchronization
import Testing

@testable import HeraldStore
import HeraldTestSupport

/// Bulk batches (`appendBatch`) are replayed without their updates by the apply thread once
/// the commit thread has written them: the projection must still equal a replay of the log,
/// followers must still get every event, and a failed commit must leave no trace in memory.
@Suite("Large bulk batches")
struct LargeBatchTests {
    /// Events per batch.
    static let batchSize = 2_000

    /// The projection of the store's log replayed one event at a time on this thread.
    static func replayOfLog(_ store: Store) throws -> Projection {
        var projection = Projection()
        for record in try store.history.records() { projection.replay(record.event, seq: record.seq) }
        return projection
    }

    @Test("the projection equals a replay of the log, and a reopened store's")
    func sameState() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 3 * Self.batchSize, seed: 41).map { ($0, Source.library) }
        let store = try Store(path: dir.path)
        for start in stride(from: 0, to: events.count, by: Self.batchSize) {
            let seqs = try store.appendBatch(Array(events[start..<(start + Self.batchSize)]))
            #expect(seqs == UInt64(start + 1)...UInt64(start + Self.batchSize))
        }
        #expect(store.lastSeq == UInt64(events.count))
        #expect(store.projection == (try Self.replayOfLog(store)))
        var readOnly = Store.Options()
        readOnly.readOnly = true
        #expect(try Store(path: dir.path, options: readOnly).projection.snapshot() == store.projection.snapshot())
    }

    @Test("the store's threads do not keep it alive: it closes on the thread that lets go of it")
    func releasesStore() throws {
        let dir = TemporaryDirectory()
        weak var dropped: Store?
        do {
            let store = try Store(path: dir.path)
            try store.appendBatch(randomEvents(count: Self.batchSize, seed: 44).map { ($0, .library) })
            dropped = store
        }
        // Closed here, on this thread: reopening the environment at once is safe.
        #expect(dropped == nil)
    }

    @Test("dropping a store right after appendBatch returns, while its batch is still applied, neither hangs nor crashes")
    func dropRightAfterBatch() async throws {
        let dir = TemporaryDirectory()
        let path = dir.path
        let rounds = 40, size = 500
        let events = randomEvents(count: rounds * size, seed: 45).map { ($0, Source.library) }
        let failure = Mutex<(any Error)?>(nil)
        let done = Atomic(false)
        // On a thread of its own, so that a hang fails the test instead of stalling the run
        // (and the test waits suspended, leaving the cooperative threads to other tests).
        Thread {
            do {
                for round in 0..<rounds {
                    // Answered once the apply thread holds the state for the batch, before it
                    // is applied: the store is released (and closed) here while it applies.
                    let store = try Store(path: path)
                    try store.appendBatch(Array(events[(round * size)..<((round + 1) * size)]))
                }
            } catch {
                failure.withLock { $0 = error }
            }
            done.store(true, ordering: .releasing)
        }.start()
        let deadline = ContinuousClock.now + .seconds(120)
        while !done.load(ordering: .acquiring) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let finished = done.load(ordering: .acquiring)
        try #require(finished, "a store released after appendBatch hung")
        #expect(failure.withLock { $0 } == nil)
        // Every batch is there, once, and the state rebuilt from the log holds them all.
        let store = try Store(path: dir.path)
        #expect(store.lastSeq == UInt64(rounds * size))
        #expect(store.projection == (try Self.replayOfLog(store)))
    }

    @Test("followers get every event of a bulk batch with its updates, once it is durable")
    func followers() async throws {
        let events = randomEvents(count: 2 * Self.batchSize, seed: 42).map { ($0, Source.library) }
        let a = TemporaryDirectory(), b = TemporaryDirectory()
        let withUpdates = try Store(path: a.path)
        let expected = try await withUpdates.append(contentsOf: events)
        let bulk = try Store(path: b.path)
        let follower = bulk.appliedEvents()
        try bulk.appendBatch(Array(events[..<Self.batchSize]))
        try bulk.appendBatch(Array(events[Self.batchSize...]))
        #expect(bulk.projection == withUpdates.projection)
        #expect(await follower.first(expected.count) == expected)
    }

    @Test("a failed bulk commit leaves the projection as the log is, and later batches go on")
    func failedCommit() throws {
        let dir = TemporaryDirectory()
        struct DiskFault: Error {}
        let failing = Fault()
        var options = Store.Options()
        options.commitFault = { if failing.isOn { throw DiskFault() } }
        let store = try Store(path: dir.path, options: options)
        let events = randomEvents(count: 3 * Self.batchSize, seed: 43).map { ($0, Source.library) }
        try store.appendBatch(Array(events[..<Self.batchSize]))
        let before = store.projection

        failing.isOn = true
        #expect(throws: DiskFault.self) { try store.appendBatch(Array(events[Self.batchSize..<(2 * Self.batchSize)])) }
        #expect(store.lastSeq == UInt64(Self.batchSize))
        #expect(try store.history.bounds().lastSeqInLog == UInt64(Self.batchSize))
        #expect(store.projection == before)

        failing.isOn = false
        #expect(try store.appendBatch(Array(events[(2 * Self.batchSize)...])) == UInt64(Self.batchSize + 1)...UInt64(2 * Self.batchSize))
        #expect(store.projection == (try Self.replayOfLog(store)))
    }
}

/// A switch the commit fault reads: on, every commit fails.
private final class Fault: Sendable {
    private let on = Mutex(false)
    var isOn: Bool {
        get { on.withLock { $0 } }
        set { on.withLock { $0 = newValue } }
    }
}
