import HeraldEvents
import HeraldProjection
import HeraldStore
import LMDB
import Testing
import HeraldTestSupport

/// Replays long enough that reading and decoding run on a second thread (above
/// `Store.pipelinedRunMinimum`, 32,768 records) give what a plain sequential replay gives,
/// and fail the same way.
@Suite("Pipelined replay")
struct PipelinedReplayTests {
    /// More events than a run must span to be pipelined, over several batches.
    static let count = 36_000

    /// A store holding `count` random events, with one snapshot after the first 2,000 (no
    /// automatic ones), and the events.
    static func makeStore(at path: String, seed: UInt64) throws -> [Event] {
        var options = Store.Options()
        options.snapshotInterval = 0
        let store = try Store(path: path, options: options)
        let events = randomEvents(count: count, seed: seed)
        for start in stride(from: 0, to: events.count, by: 2_000) {
            try store.appendBatch(events[start..<min(start + 2_000, events.count)].map { ($0, .library) })
            if start == 0 { try store.snapshot() }
        }
        return events
    }

    /// The projection after the first `through` events, replayed one by one on this thread.
    static func sequentialReplay(_ events: [Event], through: Int) -> Projection {
        var projection = Projection()
        for (index, event) in events[..<through].enumerated() { projection.replay(event, seq: UInt64(index + 1)) }
        return projection
    }

    @Test("a full rebuild, a snapshot with a long tail and projection(at:) equal a sequential replay")
    func sameState() throws {
        let dir = TemporaryDirectory()
        let events = try Self.makeStore(at: dir.path, seed: 31)
        let expected = Self.sequentialReplay(events, through: events.count)

        var noSnapshots = Store.Options()
        noSnapshots.useSnapshots = false
        let rebuilt = try Store(path: dir.path, options: noSnapshots)
        #expect(rebuilt.lastSeq == UInt64(events.count))
        #expect(rebuilt.projection == expected)
        #expect(rebuilt.projection.snapshot() == expected.snapshot())
        let middle = 34_000
        #expect(
            try rebuilt.projection(at: UInt64(middle), useSnapshots: false).snapshot()
                == Self.sequentialReplay(events, through: middle).snapshot())
        var replayed = 0
        let replay = try rebuilt.replay { record, _, _ in
            replayed += 1
            return record.seq == UInt64(replayed)
        }
        #expect(replayed == events.count)
        #expect(replay.snapshot() == expected.snapshot())

        // The snapshot after event 2,000 leaves a tail long enough to pipeline.
        #expect(try rebuilt.snapshots.seqs() == [2_000])
        var readOnly = Store.Options()
        readOnly.readOnly = true
        let restored = try Store(path: dir.path, options: readOnly)
        #expect(restored.projection.snapshot() == expected.snapshot())
    }

    @Test("a consumer that stops early ends the pipeline, gets nothing more, and the store closes at once")
    func stopsEarly() throws {
        let dir = TemporaryDirectory()
        _ = try Self.makeStore(at: dir.path, seed: 32)
        var options = Store.Options()
        options.replayOnOpen = false
        weak var dropped: Store?
        do {
            let store = try Store(path: dir.path, options: options)
            var seen: [UInt64] = []
            _ = try store.replay { record, _, _ in
                seen.append(record.seq)
                return record.seq < 10_000
            }
            #expect(seen == Array(1...10_000))
            dropped = store
        }
        // The decoding thread let go of the store before the replay returned: it closed here,
        // on this thread, so reopening its environment at once is safe.
        #expect(dropped == nil)
    }

    @Test("a damaged record deep in a long log fails the rebuild naming its seq, as a sequential one does")
    func damagedRecord() throws {
        let dir = TemporaryDirectory()
        _ = try Self.makeStore(at: dir.path, seed: 33)
        let damagedSeq: UInt64 = 34_000
        do {
            let environment = try Environment(path: dir.path)
            let log = try #require(try environment.openDatabase("log"))
            try environment.write { txn in
                var value = try #require(try txn.get(log, key: SeqKey(damagedSeq).bytes))
                value[value.count / 2] ^= 0x40
                try txn.put(log, key: SeqKey(damagedSeq).bytes, value: value)
            }
        }
        func isDamage(_ error: any Error) -> Bool {
            guard let error = error as? StoreError, error.code == .damagedRecord, let path = error.path, let seq = error.seq, let reason = error.reason else { return false }
            return path == dir.path && seq == damagedSeq && reason.contains("checksum")
        }
        var noSnapshots = Store.Options()
        noSnapshots.useSnapshots = false
        #expect(performing: { _ = try Store(path: dir.path, options: noSnapshots) }, throws: isDamage)

        var inspect = Store.Options()
        inspect.replayOnOpen = false
        let store = try Store(path: dir.path, options: inspect)
        #expect(performing: { _ = try store.projection(at: .max, useSnapshots: false) }, throws: isDamage)
        // The caller gets every record before the damaged one, then the error.
        var last: UInt64 = 0
        #expect(
            performing: {
                try store.history.forEach { record in
                    last = record.seq
                    return true
                }
            }, throws: isDamage)
        #expect(last == damagedSeq - 1)
        #expect(try store.projection(at: damagedSeq - 1, useSnapshots: false).snapshot().isEmpty == false)
    }
}
