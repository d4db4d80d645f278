import Foundation
import HeraldEvents
import HeraldProjection
@testable import HeraldStore
import LMDB
import Synchronization
import Testing
import HeraldTestSupport

/// The library API as an app that embeds the store uses it: read-only stores, followers,
/// refreshes, options that leave the projection empty, invalid input.
@Suite("Embedder QA")
struct EmbedderQATests {
    private func notify(_ account: String = "tg:1", id: Int64, body: String = "hi") -> Event {
        Event(account: account, .notify(.init(
            chat: "user:5", kind: .message, id: id, date: 1_754_385_290, title: "Alice", body: body)))
    }

    /// Options without fsync, for tests whose spinning threads should not outlast the appends.
    private func noSync() -> Store.Options {
        var options = Store.Options()
        options.durability = .noSync
        return options
    }

    private func readOnly() -> Store.Options {
        var options = Store.Options()
        options.readOnly = true
        return options
    }

    @Test("a quarantine id removed by a retry or a purge is never given again, across reopens")
    func quarantineIdsNotReused() throws {
        let dir = TemporaryDirectory()
        let entry = { (line: Int) in QuarantinedPayload(receivedAt: 1, format: "x", input: "-", line: line, reason: "r", raw: [1]) }
        do {
            let store = try Store(path: dir.path)
            #expect(try store.quarantine.add([entry(1), entry(2)]) == [1, 2])
            #expect(try store.quarantine.remove(id: 2))
            #expect(try store.quarantine.add([entry(3)]) == [3])
            #expect(try store.quarantine.remove(id: 3))
        }
        let store = try Store(path: dir.path)
        #expect(try store.quarantine.add([entry(4)]) == [4])
        #expect(try store.quarantine.all().map(\.id) == [1, 4])
    }

    @Test("removing a key or a quarantined payload from a read-only store throws, not traps")
    func readOnlyRemovals() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            try store.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: [1, 2, 3]))
            try store.quarantine.add([QuarantinedPayload(receivedAt: 1, format: "x", input: "-", line: 0, reason: "r", raw: [1])])
        }
        let reader = try Store(path: dir.path, options: readOnly())
        for remove in [{ try reader.keyring.remove(id: 7) }, { try reader.quarantine.remove(id: 1) }] {
            #expect {
                try remove()
            } throws: { error in
                guard let error = error as? StoreError, error.code == .readOnly, let path = error.path else { return false }
                return path == dir.path
            }
        }
        #expect(try reader.keyring.all().count == 1)
        #expect(try reader.quarantine.all().count == 1)
    }

    @Test("concurrent refreshes of a read-only store apply and publish each event once")
    func concurrentRefresh() async throws {
        let dir = TemporaryDirectory()
        let writer = try Store(path: dir.path, options: noSync())
        let reader = try Store(path: dir.path, options: readOnly())
        let follower = reader.appliedEvents()
        let events = randomEvents(count: 3_000, seed: 11)
        let done = Flag()
        // Threads, not tasks: the refreshers spin, and would starve the cooperative pool.
        let refreshers = (0..<3).map { _ in
            Thread {
                while !done.value.load(ordering: .acquiring) { try! reader.refresh() }
            }
        }
        for thread in refreshers { thread.start() }
        for event in events { try await writer.append(event) }
        done.value.store(true, ordering: .releasing)
        try reader.refresh()
        #expect(reader.lastSeq == 3_000)
        #expect(reader.projection == writer.projection)
        #expect(await follower.first(3_000).map(\.seq) == Array(1...3_000))
        while refreshers.contains(where: { $0.isExecuting }) { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("refreshing a writable store while it appends applies nothing twice")
    func refreshWhileAppending() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: noSync())
        let events = randomEvents(count: 2_000, seed: 12)
        let done = Flag()
        let refresher = Thread {
            while !done.value.load(ordering: .acquiring) { #expect(try! store.refresh().isEmpty) }
        }
        refresher.start()
        for event in events { try await store.append(event) }
        done.value.store(true, ordering: .releasing)
        while refresher.isExecuting { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.lastSeq == 2_000)
        #expect(try Store(path: dir.path, options: readOnly()).projection == store.projection)
    }

    @Test("releasing the store ends its followers' streams, after the events they buffered")
    func releaseEndsFollowers() async throws {
        let dir = TemporaryDirectory()
        var store: Store? = try Store(path: dir.path)
        let stream = store!.appliedEvents()
        let follower = Task { await stream.first(1_000).map(\.seq) }
        try await store!.append(notify(id: 1))
        try await store!.append(notify(id: 2))
        store = nil
        let timedOut = Flag()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(5))
            timedOut.value.store(true, ordering: .releasing)
            follower.cancel()
        }
        let seen = await follower.value
        watchdog.cancel()
        let hung = timedOut.value.load(ordering: .acquiring)
        #expect(!hung)
        #expect(seen == [1, 2])
        // The directory opens again at once: the stream kept nothing of the store.
        #expect(try Store(path: dir.path).lastSeq == 2)
    }

    @Test("a source whose digest is not 16 bytes is rejected, nothing is stored, and the store still opens")
    func invalidDigest() throws {
        let dir = TemporaryDirectory()
        var source = Source(format: "herald")
        source.digest = [1, 2, 3]
        func isBadDigest(_ error: any Error, at expected: Int) -> Bool {
            if let error = error as? StoreError, error.code == .invalid, let cause = error.eventError { return expected == 0 && cause.field == "source.digest" }
            guard let error = error as? StoreError, error.code == .invalidEvent, let index = error.batchIndex, let cause = error.eventError else { return false }
            return index == expected && cause.field == "source.digest"
        }
        do {
            let store = try Store(path: dir.path)
            #expect { try store.append(notify(id: 1), source: source) } throws: { isBadDigest($0, at: 0) }
            #expect {
                try store.append(contentsOf: [(notify(id: 1), .library), (notify(id: 2), source)])
            } throws: { isBadDigest($0, at: 1) }
            #expect { try store.appendBatch([(notify(id: 1), source)]) } throws: { isBadDigest($0, at: 0) }
            let record = LogRecord(seq: 1, recordedAt: 1, source: source, event: notify(id: 1))
            #expect { try store.importRecords([record]) } throws: { isBadDigest($0, at: 0) }
            #expect(store.lastSeq == 0)
        }
        let reopened = try Store(path: dir.path)
        #expect(try reopened.history.bounds().recordCountInLog == 0)
    }

    @Test("a store opened without replay takes no snapshot of its empty projection, so a later open loses nothing")
    func noReplayNoSnapshot() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            for event in randomEvents(count: 200, seed: 3) { try store.append(event) }
        }
        do {
            var options = Store.Options()
            options.replayOnOpen = false
            options.snapshotInterval = 50
            let store = try Store(path: dir.path, options: options)
            try store.append(notify(id: 9_999))
            store.snapshots.waitUntilIdle()
            #expect {
                try store.snapshot()
            } throws: { error in
                guard let error = error as? StoreError, error.code == .snapshotUnavailable, let path = error.path else { return false }
                return path == dir.path
            }
            #expect(try store.snapshots.seqs().isEmpty)
        }
        var replaying = Store.Options()
        replaying.useSnapshots = false
        let expected = try Store(path: dir.path, options: replaying).projection
        let reopened = try Store(path: dir.path)
        let same = reopened.projection == expected
        #expect(same)
        #expect(reopened.projection.seq == 201)
    }

    @Test("snapshot() on a store opened with group-limit overrides throws, not traps, and writes nothing")
    func overridesNoSnapshot() throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.projection.groupCountMaxOverride = 2
        let store = try Store(path: dir.path, options: options)
        try store.append(notify(id: 1))
        #expect {
            try store.snapshot()
        } throws: { error in
            guard let error = error as? StoreError, error.code == .snapshotUnavailable, let path = error.path, let reason = error.reason else { return false }
            return path == dir.path && reason.contains("override")
        }
        #expect(try store.snapshots.seqs().isEmpty)
    }

    @Test("an import whose seqs do not follow the log fails alone, not the appends committed with it")
    func importBesideAppends() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(notify(id: 1))
        let stale = LogRecord(seq: 1, recordedAt: 1, source: .library, event: notify(id: 2))
        let appended = Mutex<[UInt64]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<300 {
                if worker == 0 {
                    #expect {
                        try store.importRecords([stale])
                    } throws: { error in
                        guard let error = error as? StoreError, error.code == .outOfOrder, let seq = error.seq else { return false }
                        return seq == 1
                    }
                } else {
                    do {
                        let applied = try store.append(notify(id: Int64(1_000 * worker + index)))
                        appended.withLock { $0.append(applied.seq) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(appended.withLock { $0.sorted() } == Array(2...901))
        #expect(try store.history.records().map(\.seq) == Array(1...901))
        #expect(store.lastSeq == 901)
    }

    @Test("an append inside forEachRecord that needs a bigger map fails with map-full instead of hanging")
    func appendInsideRead() throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.initialMapSize = 64 << 10
        let store = try Store(path: dir.path, options: options)
        try store.append(notify(id: 1))
        let big = String(repeating: "y", count: 256 << 10)
        try store.history.forEach { _ in
            #expect {
                try store.append(notify(id: 2, body: big))
            } throws: { error in
                guard let error = error as? StoreError, error.code == .lmdb, let cause = error.lmdbError else { return false }
                return cause.code == LMDBError.mapFull
            }
            return false
        }
        #expect(store.lastSeq == 1)
        // Outside the read, the map grows as usual.
        #expect(try store.append(notify(id: 2, body: big)).seq == 2)
        #expect(try Store(path: dir.path, options: readOnly()).lastSeq == 2)
    }

    @Test("a bulk appendBatch that grows the map does not deadlock with a thread reading the state inside forEachRecord")
    func bulkGrowthBesideReader() async throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.initialMapSize = 256 << 10
        let store = try Store(path: dir.path, options: options)
        try await store.append(notify(id: 1))
        let done = Flag()
        let reader = Thread {
            while !done.value.load(ordering: .acquiring) {
                try! store.history.forEach { record in store.lastSeq >= record.seq }
            }
        }
        reader.start()
        let events = randomEvents(count: 20_000, seed: 51)
        for start in stride(from: 0, to: events.count, by: 5_000) {
            _ = try store.appendBatch(events[start..<(start + 5_000)].map { ($0, .library) })
        }
        done.value.store(true, ordering: .releasing)
        while reader.isExecuting { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.lastSeq == 20_001)
        #expect(try Store(path: dir.path, options: readOnly()).projection == store.projection)
    }

    @Test("an import that skips seqs records as gaps only seqs nobody has, even with appends beside it")
    func importGapsBesideAppends() throws {
        for _ in 0..<10 {
            let dir = TemporaryDirectory()
            let store = try Store(path: dir.path)
            try store.append(notify(id: 1))
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                if worker == 0 {
                    usleep(2_000)
                    let record = LogRecord(seq: 1_000_000, recordedAt: 1, source: .library, event: notify("b", id: 1))
                    #expect(throws: Never.self) { try store.importRecords([record]) }
                } else {
                    for index in 0..<500 { _ = try? store.append(notify(id: Int64(index + 2))) }
                }
            }
            let seqs = try store.history.records().map(\.seq)
            let gaps = try store.history.bounds().purgedRanges
            #expect(gaps.count == 1)
            #expect(!gaps.contains { gap in seqs.contains { gap.contains($0) } })
            // Every seq up to the import is a record or in the gap.
            let before = seqs.filter { $0 < 1_000_000 }
            #expect(gaps.first == (before.last! + 1)...999_999)
            #expect(try store.verify().problems.isEmpty)
        }
    }

    @Test("imports record the seqs they skip after a purge gap and between their own records")
    func importGaps() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(notify(id: 1))
        let records = [5, 6, 9].map { LogRecord(seq: $0, recordedAt: 1, source: .library, event: notify("b", id: Int64($0))) }
        try store.importRecords(records)
        #expect(try store.history.bounds().purgedRanges == [2...4, 7...8])
        try store.importRecords([LogRecord(seq: 12, recordedAt: 1, source: .library, event: notify("b", id: 12))])
        #expect(try store.history.bounds().purgedRanges == [2...4, 7...8, 10...11])
        #expect(try store.append(notify(id: 2)).seq == 13)
        #expect(try store.verify().problems.isEmpty)
    }

    @Test("cancelling followers while appends hand them events neither deadlocks nor loses events for the others")
    func cancelFollowersDuringAppends() async throws {
        // A deadlock hangs the test (no watch helps: the stuck threads can be the pool's).
        for _ in 0..<5 { try await Self.cancelFollowersRound() }
    }

    /// One round of ``cancelFollowersDuringAppends()``: twenty followers, every other one
    /// cancelled while a thread appends; the others get every event.
    private static func cancelFollowersRound() async throws {
        let dir = TemporaryDirectory()
        var followers: [Task<Int, Never>] = []
        do {
            // No fsync: the test is about the followers, and rounds of durable appends
            // are slow on a loaded machine.
            var options = Store.Options()
            options.durability = .noSync
            let store = try Store(path: dir.path, options: options)
            followers = (0..<20).map { _ in
                let stream = store.appliedEvents()
                return Task { await stream.first(1_000_000).count }
            }
            let writer = Task.detached {
                for id in 1...2_000 { try store.append(Event(account: "a", .dismiss(notificationId: Int64(id)))) }
            }
            for (index, follower) in followers.enumerated() where index % 2 == 0 {
                try await Task.sleep(for: .milliseconds(5))
                follower.cancel()
            }
            try await writer.value
        }
        for (index, follower) in followers.enumerated() where index % 2 == 1 {
            #expect(await follower.value == 2_000)
        }
    }
}

/// A flag threads share.
private final class Flag: Sendable {
    let value = Atomic(false)
}
