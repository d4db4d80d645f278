import Foundation
import Synchronization
import HeraldEvents
import HeraldProjection
import LMDB
import Testing
import HeraldTestSupport

@testable import HeraldStore

@Suite("Snapshots and restarts")
struct SnapshotTests {
    @Test("the envelope round-trips and every damaged byte is detected")
    func envelope() throws {
        let envelope = SnapshotEnvelope(seq: 42, payload: Array("payload bytes".utf8))
        let bytes = envelope.encoded
        #expect(bytes.count == SnapshotEnvelope.overhead + 13)
        #expect(try bytes.withUnsafeBytes { try SnapshotEnvelope(bytes: $0, expectedSeq: 42) } == envelope)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x01
            #expect(throws: SnapshotEnvelope.Damage.self) { try damaged.withUnsafeBytes { try SnapshotEnvelope(bytes: $0) } }
        }
        #expect(throws: SnapshotEnvelope.Damage.self) { try bytes.withUnsafeBytes { try SnapshotEnvelope(bytes: $0, expectedSeq: 41) } }
        var future = bytes
        future[4] = 9
        do {
            _ = try future.withUnsafeBytes { try SnapshotEnvelope(bytes: $0) }
            Issue.record("an unknown version decoded")
        } catch {
            #expect((error as? SnapshotEnvelope.Damage)?.isUnknownVersion == true)
        }
    }

    @Test("snapshot + tail equals a full replay, byte for byte, at many cut points", arguments: [1, 2, 3] as [UInt64])
    func equivalence(seed: UInt64) throws {
        let events = randomEvents(count: 400, seed: seed)
        let reference = referenceProjection(events)
        var rng = SplitMix64(seed: seed)
        let cuts = [0, 1, 399, 400] + (0..<8).map { _ in Int.random(in: 2..<399, using: &rng) }
        for cut in cuts {
            let dir = TemporaryDirectory()
            do {
                let store = try Store(path: dir.path, options: fastOptions())
                try store.append(contentsOf: events[..<cut].map { ($0, .library) })
                #expect(try store.snapshot() == UInt64(cut))
                try store.append(contentsOf: events[cut...].map { ($0, .library) })
            }
            let reopened = try Store(path: dir.path, options: fastOptions())
            #expect(try reopened.snapshots.seqs() == [UInt64(cut)])
            #expect(reopened.lastSeq == 400)
            #expect(reopened.projection.snapshot() == reference.snapshot(), "cut \(cut)")
            #expect(reopened.projection.stateJSON() == reference.stateJSON(), "cut \(cut)")
            // Appends after the restart continue exactly like the reference.
            let extra = randomEvents(count: 30, seed: seed + 100)
            var continued = reference
            for (offset, event) in extra.enumerated() {
                let applied = try reopened.append(event)
                #expect(applied.seq == UInt64(401 + offset))
                #expect(applied.updates == continued.apply(event, seq: applied.seq).updates)
            }
            #expect(reopened.projection == continued)
        }
    }

    @Test("automatic snapshots every N events, the newest K kept; restart uses the newest")
    func automatic() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 260, seed: 9)
        var options = fastOptions(snapshotInterval: 50)
        options.snapshotsToKeep = 3
        do {
            let store = try Store(path: dir.path, options: options)
            for (index, event) in events[..<130].enumerated() {
                try store.append(event)
                // Snapshots are written in the background; one still in flight when the
                // interval passes again would put the next one off.
                if (index + 1) % 50 == 0 { store.snapshots.waitUntilIdle() }
            }
            #expect(try store.snapshots.seqs() == [50, 100])
            try store.append(contentsOf: events[130...].map { ($0, .library) })
            store.snapshots.waitUntilIdle()
            #expect(try store.snapshots.seqs() == [50, 100, 260])
        }
        let reopened = try Store(path: dir.path, options: options)
        #expect(reopened.projection == referenceProjection(events))
        #expect(try reopened.verify().isClean)
    }

    /// `bytes` (a snapshot payload whose checksum is taken as checked) restored in one run,
    /// and as the store restores a large one (its accounts on two threads).
    static func restoreBothWays(_ bytes: [UInt8]) -> (oneRun: Result<Projection, SnapshotError>, store: Result<Projection, SnapshotError>) {
        bytes.withUnsafeBytes { buffer in
            (
                Result { () throws(SnapshotError) in try Projection(snapshot: buffer, configuration: .init(), checksumVerified: true) },
                Result { () throws(SnapshotError) in
                    try Store.restore(
                        Projection.SnapshotAccounts(
                            snapshot: buffer, configuration: .init(), checksumVerified: true, onlyAccount: nil,
                            readingFormerFormats: false),
                        twoThreadsFrom: 1)
                }
            )
        }
    }

    @Test("a snapshot's accounts restored on two threads give what one run gives, damaged or not")
    func twoThreadRestore() throws {
        var projection = Projection()
        for (index, event) in PackedNotifyReplayTests.events(count: 3_000, seed: 47).enumerated() {
            _ = projection.apply(event, seq: UInt64(index + 1))
        }
        let bytes = projection.snapshot()
        let restored = Self.restoreBothWays(bytes)
        #expect(try restored.store.get() == projection)
        #expect(try restored.store.get().snapshot() == bytes)
        // A changed byte in each half (the checksum not checked): the same projection, or the
        // same error (the earlier account's), as in one run.
        var rng = SplitMix64(seed: 48)
        for _ in 0..<200 {
            var damaged = bytes
            for half in [12..<(bytes.count / 2), (bytes.count / 2)..<(bytes.count - 8)] {
                damaged[Int.random(in: half, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            }
            let outcome = Self.restoreBothWays(damaged)
            #expect(outcome.oneRun == outcome.store)
        }
    }

    @Test("a damaged or unknown snapshot is skipped for an older one or a full replay, never applied")
    func fallback() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 300, seed: 4)
        let reference = referenceProjection(events)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            for (index, event) in events.enumerated() {
                try store.append(event)
                if [100, 200, 300].contains(index + 1) { try store.snapshot() }
            }
        }
        // Damage the newest snapshot's checksum-covered bytes through LMDB, and mark the middle
        // one with an unknown version.
        try rewriteSnapshot(in: dir.path, seq: 300) { $0[$0.count / 2] ^= 0xFF }
        try rewriteSnapshot(in: dir.path, seq: 200) { $0[4] = 77 }
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            #expect(store.projection == reference)
            let report = try store.verify()
            #expect(report.problems.map(\.seq).sorted() == [200, 300])
            #expect(report.problems.allSatisfy { $0.location == .snapshot })
        }
        try rewriteSnapshot(in: dir.path, seq: 100) { $0 = Array($0.prefix(10)) }
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(store.projection == reference)
    }

    @Test("8 concurrent durable producers share commits; each call returns once its event is durable")
    func groupCommit() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)  // full durability
        var readOnly = Store.Options()
        readOnly.readOnly = true
        readOnly.replayOnOpen = false
        let reader = try Store(path: dir.path, options: readOnly)
        let producers = 8, perProducer = 40
        let failures = Mutex(0)
        let group = DispatchGroup()
        for p in 0..<producers {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<perProducer {
                    let event = Event(account: "p\(p)", .note(source: "test", reason: "\(i)"))
                    guard let seq = try? store.append(event).seq,
                        let seen = try? reader.history.records(from: seq, through: seq).first, seen.event == event
                    else {
                        failures.withLock { $0 += 1 }
                        continue
                    }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(try store.history.bounds().recordCountInLog == producers * perProducer)
        let commits = store.appendThreads.commitCount
        #expect(commits < producers * perProducer, "\(commits) commits for \(producers * perProducer) events")
    }

    @Test("concurrent producers: each call gets its updates in seq order, followers see every event once, callers read their own events")
    func groupCommitAppliesInSeqOrder() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)  // full durability: batches apply while they sync
        let followed = store.appliedEvents()
        let producers = 8, perProducer = 40
        let events = randomEvents(count: producers * perProducer, seed: 21)
        let returned = Mutex<[Applied]>([])
        let problems = Mutex<[String]>([])
        let group = DispatchGroup()
        for p in 0..<producers {
            group.enter()
            Thread {
                defer { group.leave() }
                for event in events[(p * perProducer)..<((p + 1) * perProducer)] {
                    do {
                        let applied = try store.append(event)
                        // Once append returns, the state holds the event.
                        if store.lastSeq < applied.seq { problems.withLock { $0.append("seq \(applied.seq) not in the state") } }
                        returned.withLock { $0.append(applied) }
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }
        #expect(problems.withLock { $0 } == [])
        let inOrder = returned.withLock { $0 }.sorted { $0.seq < $1.seq }
        #expect(inOrder.map(\.seq) == Array(1...UInt64(producers * perProducer)))
        var reference = Projection()
        for applied in inOrder {
            #expect(reference.apply(applied.event, seq: applied.seq).updates == applied.updates, "seq \(applied.seq)")
        }
        #expect(store.projection == reference)
        var iterator = followed.makeAsyncIterator()
        for expected in inOrder {
            let next = await iterator.next()
            #expect(next == expected)
        }
        #expect(store.appendThreads.commitCount < producers * perProducer)
    }
}

/// Rewrites the stored snapshot at `seq` with `change` applied, straight through LMDB.
func rewriteSnapshot(in path: String, seq: UInt64, _ change: (inout [UInt8]) -> Void) throws {
    let environment = try Environment(path: path)
    let database = try #require(try environment.openDatabase("snapshots"))
    try environment.write { txn in
        var value = try #require(try txn.get(database, key: SeqKey(seq).bytes))
        change(&value)
        try txn.put(database, key: SeqKey(seq).bytes, value: value)
    }
}
