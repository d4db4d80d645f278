import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Issue #25: the async API, close(), and a resumable, bounded change stream.
@Suite("Async API, close and resumable followers")
struct AsyncAPITests {
    func notify(_ id: Int64, chat: String = "c") -> Event {
        Event(account: "a", .notify(.init(chat: chat, kind: .message, id: id, date: 1_700_000_000 + id, title: "t\(id)")))
    }

    @Test("the README's embedding example ends: close() ends the appliedEvents loop")
    func closeEndsFollowers() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let stream = store.appliedEvents()
        let follower = Task {
            var seqs: [UInt64] = []
            for await applied in stream { seqs.append(applied.seq) }
            return seqs
        }
        try await store.append(notify(1))
        try await store.append(notify(2))
        store.close()
        store.close()  // idempotent
        #expect(await follower.value == [1, 2])
        await #expect(throws: StoreError.self) { try await store.append(notify(3)) }
        var afterClose = 0
        for await _ in store.appliedEvents() { afterClose += 1 }
        #expect(afterClose == 0, "a stream opened after close ends at once")
    }

    @Test("async appends from many tasks share commits and each gets its own seq")
    func concurrentAsyncAppends() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let seqs = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for id in 1...64 { group.addTask { try await store.append(notify(Int64(id), chat: "c\(id % 4)")).seq } }
            return try await group.reduce(into: [UInt64]()) { $0.append($1) }
        }
        #expect(Set(seqs) == Set(1...64))
        #expect(try await store.history.records().count == 64)
    }

    @Test("appliedEvents(after:) replays the log after a seq with the same updates, then follows live, exactly once")
    func resumeAfterSeq() async throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.snapshotInterval = 300
        let events = randomEvents(count: 1_200, seed: 9)
        var expected: [Applied] = []
        do {
            let store = try Store(path: dir.path, options: options)
            for chunk in stride(from: 0, to: 1_000, by: 100) {
                expected += try await store.append(contentsOf: events[chunk..<chunk + 100].map { ($0, .library) })
            }
        }
        // A restart: the follower stored seq 437 and resumes there.
        let store = try Store(path: dir.path, options: options)
        var iterator = store.appliedEvents(after: 437).makeAsyncIterator()
        var received: [Applied] = []
        for _ in 438...1_000 { received.append(try #require(try await iterator.next())) }
        #expect(received == Array(expected[437..<1_000]))
        // Live events follow, none missed or repeated.
        expected += try await store.append(contentsOf: events[1_000..<1_200].map { ($0, .library) })
        for _ in 1_001...1_200 { received.append(try #require(try await iterator.next())) }
        #expect(received.map(\.seq) == Array(438...1_200))
        #expect(received == Array(expected[437...]))
        store.close()
        #expect(try await iterator.next() == nil)
    }

    @Test("a follower that falls behind its buffer ends with the seq to resume after, and resuming misses nothing")
    func fallsBehindThenResumes() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let stream = store.appliedEvents(after: 0, bufferLimit: 4)
        let (gate, open) = AsyncStream<Void>.makeStream()
        // The follower takes the first event, then stalls until the gate opens.
        let consumer = Task { () throws -> (seen: [UInt64], resumeAfter: UInt64?) in
            var seen: [UInt64] = []
            var iterator = stream.makeAsyncIterator()
            do {
                if let first = try await iterator.next() { seen.append(first.seq) }
                for await _ in gate { break }
                while let applied = try await iterator.next() { seen.append(applied.seq) }
            } catch let error as StoreError where error.code == .followerFellBehind {
                return (seen, error.seq)
            }
            return (seen, nil)
        }
        // The log is empty, so the follower goes live at once.
        while store.followers.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        try await store.append(notify(1))
        for id in 2...20 { try await store.append(notify(Int64(id))) }
        open.yield(())
        let (seen, resumeAfter) = try await consumer.value
        let last = try #require(resumeAfter)
        #expect(seen == Array(1...5) && last == 5, "\(seen), resume after \(last)")
        #expect(store.followers.isEmpty, "the follower that fell behind is dropped")
        var rest = store.appliedEvents(after: last).makeAsyncIterator()
        for expected in (last + 1)...20 { #expect(try await rest.next()?.seq == expected) }
    }

    @Test("records(from:limit:) pages through archive and log")
    func paging() async throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            try await store.append(contentsOf: (1...25).map { (notify(Int64($0)), Source.library) })
            try await store.snapshot()
        }
        try await StoreMaintenance(path: dir.path).compact()
        let store = try Store(path: dir.path)
        try await store.append(notify(26))
        var seqs: [UInt64] = []
        var from: UInt64 = 1
        while case let page = try await store.history.records(from: from, limit: 10), let last = page.last {
            #expect(page.count <= 10)
            seqs += page.map(\.seq)
            from = last.seq + 1
        }
        #expect(seqs == Array(1...26))
    }
}
