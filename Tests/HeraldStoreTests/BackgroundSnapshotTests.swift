import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldStore

/// Automatic snapshots are encoded and written on a queue of the store: appends must never
/// wait for them, each must hold exactly the state as of its seq, and closing the store must
/// let the one in flight finish before the environment closes.
@Suite("Automatic snapshots in the background")
struct BackgroundSnapshotTests {
    @Test("each automatic snapshot lands at the seq where the interval passed and equals a replay up to it")
    func seqsAndContent() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 1_000, seed: 31)
        let interval: UInt64 = 64
        var options = fastOptions(snapshotInterval: interval)
        options.snapshotsToKeep = 100
        let store = try Store(path: dir.path, options: options)
        var rng = SplitMix64(seed: 31)
        var expected: [UInt64] = []
        var written = 0
        while written < events.count {
            let size = min(Int.random(in: 1...40, using: &rng), events.count - written)
            try store.append(contentsOf: events[written..<(written + size)].map { ($0, .library) })
            written += size
            // Waiting after each batch keeps every snapshot from being put off by the last
            // one, so the seqs follow from the interval alone.
            store.snapshots.waitUntilIdle()
            if UInt64(written) - (expected.last ?? 0) >= interval { expected.append(UInt64(written)) }
        }
        #expect(expected.count >= 10)
        #expect(try store.snapshots.seqs() == expected)
        try expectSnapshotsEqualReplay(store, events: events)
    }

    @Test("with producers racing the background queue, every snapshot equals a replay of the log up to its seq")
    func racingProducers() throws {
        let dir = TemporaryDirectory()
        let interval: UInt64 = 50
        var options = fastOptions(snapshotInterval: interval)
        options.snapshotsToKeep = 1_000
        let store = try Store(path: dir.path, options: options)
        let producers = 4, perProducer = 300
        let events = randomEvents(count: producers * perProducer, seed: 32)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: producers) { p in
            for event in events[(p * perProducer)..<((p + 1) * perProducer)] {
                do { try store.append(event) } catch { failures.withLock { $0.append("\(error)") } }
            }
        }
        store.snapshots.waitUntilIdle()
        #expect(failures.withLock { $0 } == [])
        let seqs = try store.snapshots.seqs()
        // How many depends on how fast the queue keeps up; the first is certain.
        #expect(!seqs.isEmpty)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 - $0 >= interval }, "\(seqs)")
        try expectSnapshotsEqualReplay(store, events: try store.history.records().map(\.event))
    }

    @Test("closing the store right after appends that start a snapshot waits for it; the store reopens at once, valid")
    func closeWhileInFlight() throws {
        let dir = TemporaryDirectory()
        var options = fastOptions(snapshotInterval: 100)
        options.snapshotsToKeep = 3
        // Odd rounds append with updates; even ones are bulk batches, replayed without.
        let sizes = (0..<50).map { $0 % 2 == 0 ? 1_100 : 150 }
        let events = randomEvents(count: sizes.reduce(0, +), seed: 34)
        var reference = Projection()
        var written = 0
        for (round, size) in sizes.enumerated() {
            weak var dropped: Store?
            do {
                let store = try Store(path: dir.path, options: options)
                #expect(store.lastSeq == UInt64(written), "round \(round)")
                #expect(try store.snapshots.seqs().last == (written == 0 ? nil : UInt64(written)), "round \(round)")
                #expect(store.projection == reference, "round \(round)")
                let batch = events[written..<(written + size)].map { ($0, Source.library) }
                if round % 2 == 0 { try store.appendBatch(batch) } else { try store.append(contentsOf: batch) }
                for (offset, (event, _)) in batch.enumerated() { reference.replay(event, seq: UInt64(written + offset + 1)) }
                written += size
                dropped = store
            }
            // The background queue holds no reference: the store closed here, on this thread.
            #expect(dropped == nil, "round \(round)")
            if round % 10 == 9 {
                // Compaction takes the writer lock at once, and its snapshot is the one just written.
                #expect(try StoreMaintenance(path: dir.path, options: options).compact().base == UInt64(written), "round \(round)")
            }
        }
        let reopened = try Store(path: dir.path, options: options)
        #expect(reopened.projection == reference)
        #expect(try reopened.verify().isClean)
    }

    @Test("appends go on while an automatic snapshot is held in flight; none queues behind it, the next is taken after")
    func appendsDoNotWait() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 60, seed: 33)
        let (store, gate) = try storeHoldingSnapshot(in: dir, keeping: 10, events: events)
        // The snapshot at seq 10 is held in the fault hook: these appends must not wait for it.
        for event in events[10..<30] { try store.append(event) }
        try store.appendBatch(events[30..<50].map { ($0, .library) })
        #expect(store.lastSeq == 50)
        #expect(try store.snapshots.seqs() == [], "the held snapshot was written before the appends returned")
        gate.open()
        store.snapshots.waitUntilIdle()
        #expect(!gate.timedOut, "the appends waited for the snapshot until the gate gave up")
        // The interval passed four more times meanwhile; none of those was queued.
        #expect(try store.snapshots.seqs() == [10])
        #expect(gate.seqs == [10])
        try store.append(events[50])
        store.snapshots.waitUntilIdle()
        #expect(try store.snapshots.seqs() == [10, 51])
        #expect(gate.seqs == [10, 51])
        try expectSnapshotsEqualReplay(store, events: events)
    }

    @Test("a failing automatic snapshot is never thrown at appenders; the next interval tries again")
    func failureIsNotThrown() throws {
        let dir = TemporaryDirectory()
        struct DiskFault: Error {}
        let attempts = Mutex<[UInt64]>([])
        var options = fastOptions(snapshotInterval: 10)
        options.automaticSnapshotFault = { seq in
            let first = attempts.withLock { attempts in
                attempts.append(seq)
                return attempts.count == 1
            }
            if first { throw DiskFault() }
        }
        let store = try Store(path: dir.path, options: options)
        let events = randomEvents(count: 20, seed: 35)
        for event in events[..<19] { try store.append(event) }
        store.snapshots.waitUntilIdle()
        #expect(attempts.withLock { $0 } == [10])
        #expect(try store.snapshots.seqs() == [])
        try store.append(events[19])
        store.snapshots.waitUntilIdle()
        #expect(attempts.withLock { $0 } == [10, 20])
        #expect(try store.snapshots.seqs() == [20])
        try expectSnapshotsEqualReplay(store, events: events)
    }

    @Test("an on-demand snapshot waits for the automatic one in flight; pruning keeps the newest")
    func onDemandAfterAutomatic() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 15, seed: 36)
        let (store, gate) = try storeHoldingSnapshot(in: dir, keeping: 1, events: events)
        for event in events[10...] { try store.append(event) }
        let onDemand = Mutex<Result<UInt64, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { try store.snapshot() }
            onDemand.withLock { $0 = result }
            finished.signal()
        }.start()
        // Queued behind the held automatic snapshot, the on-demand one cannot finish.
        #expect(finished.wait(timeout: .now() + 0.2) == .timedOut)
        gate.open()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(try onDemand.withLock { try $0?.get() } == 15)
        // Written last, the on-demand snapshot pruned the automatic one (one is kept).
        #expect(try store.snapshots.seqs() == [15])
        #expect(store.state.withLock { $0.lastSnapshotSeq } == 15)
        try expectSnapshotsEqualReplay(store, events: events)
    }
}

/// A store with a snapshot interval of 10 that has appended the first 10 of `events` one by
/// one, with the automatic snapshot at seq 10 started and held by the returned gate.
private func storeHoldingSnapshot(in dir: TemporaryDirectory, keeping: Int, events: [Event]) throws -> (Store, SnapshotGate) {
    let gate = SnapshotGate()
    var options = fastOptions(snapshotInterval: 10)
    options.snapshotsToKeep = keeping
    options.automaticSnapshotFault = { seq in gate.pass(seq) }
    let store = try Store(path: dir.path, options: options)
    for event in events[..<10] { try store.append(event) }
    #expect(gate.started.wait(timeout: .now() + 30) == .success, "the snapshot at seq 10 did not start")
    return (store, gate)
}

/// Checks every stored snapshot: it decodes and equals the replay of `events` (seqs 1, 2, …)
/// up to its seq.
private func expectSnapshotsEqualReplay(_ store: Store, events: [Event]) throws {
    for seq in try store.snapshots.seqs() {
        switch try store.loadSnapshot(seq: seq) {
        case .success(let projection):
            #expect(projection == referenceProjection(events[..<Int(seq)]), "snapshot \(seq)")
        case .failure(let damage):
            Issue.record("snapshot \(seq): \(damage.reason)")
        }
    }
}

/// A fault hook that holds the first automatic snapshot in flight until ``open()``, and
/// records the seq of every one that passes.
private final class SnapshotGate: Sendable {
    /// Signalled when the first snapshot reaches the hook.
    let started = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let state = Mutex<(seqs: [UInt64], timedOut: Bool)>(([], false))

    /// The seqs of the snapshots that reached the hook, in order.
    var seqs: [UInt64] { state.withLock { $0.seqs } }
    /// Whether the first snapshot gave up waiting (after 10 s) rather than being let through.
    var timedOut: Bool { state.withLock { $0.timedOut } }

    /// The hook: holds the first snapshot, lets later ones through.
    func pass(_ seq: UInt64) {
        let first = state.withLock { state in
            state.seqs.append(seq)
            return state.seqs.count == 1
        }
        guard first else { return }
        started.signal()
        // A bound, so that a store whose appends wait for the snapshot fails the test rather
        // than hanging it.
        if gate.wait(timeout: .now() + 10) == .timedOut { state.withLock { $0.timedOut = true } }
    }

    /// Lets the held snapshot through.
    func open() { gate.signal() }
}
