import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The store's follow of one account, which the update stream (`/updates`) is made of.
@Suite("serve: the store's follow of one account", .serverThreads)
struct AccountFollowTests {
    func notify(_ account: String, _ id: Int64) -> Event {
        Event(account: account, .notify(.init(chat: "c\(id % 3)", kind: .message, id: id, date: 1_700_000_000 + id, title: "t\(id)")))
    }

    @Test("resumed after N events, it gets exactly the account's later events with their updates, from the log then live")
    func resumesWithTheAccountsEvents() async throws {
        let directory = TemporaryDirectory()
        // Seqs 1…1,300, two accounts interleaved: the log part spans three pages of 512.
        let events = (1...1_400).map { notify($0 % 3 == 0 ? "b" : "a", Int64($0)) }
        var expected: [Applied] = []
        do {
            let store = try Store(path: directory.path)
            expected += try await store.append(contentsOf: events[0..<1_300].map { ($0, .library) })
        }
        // A restart: the follower stored seq 601 and resumes there.
        let store = try Store(path: directory.path)
        var iterator = store.appliedEvents(after: 601, account: "a", catchingUp: false).makeAsyncIterator()
        let fromLog = expected.filter { $0.seq > 601 && $0.event.account == "a" }
        var received: [Applied] = []
        for _ in fromLog { received.append(try #require(try await iterator.next())) }
        #expect(received == fromLog)
        // Live: b's events never come; a's come once each, with the updates the append made.
        let live = try await store.append(contentsOf: events[1_300...].map { ($0, .library) })
        let liveOfA = live.filter { $0.event.account == "a" }
        #expect(!liveOfA.isEmpty && liveOfA.count < live.count)
        for _ in liveOfA { received.append(try #require(try await iterator.next())) }
        #expect(Array(received.suffix(liveOfA.count)) == liveOfA)
        #expect(received.allSatisfy { $0.event.account == "a" })
        #expect(received.map(\.seq) == (expected + live).filter { $0.seq > 601 && $0.event.account == "a" }.map(\.seq))
        store.close()
        #expect(try await iterator.next() == nil)
    }

    @Test("the buffer counts the account's events only; a follower that falls behind resumes after the last seq it got")
    func bufferCountsTheAccount() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.path)
        let stream = store.appliedEvents(after: 0, account: "a", catchingUp: false, bufferLimit: 4)
        let (gate, open) = AsyncStream<Void>.makeStream()
        // The follower takes the first event, then stalls until the gate opens.
        let consumer = Task(executorPreference: ThreadExecutor.servers) { () -> (seen: [UInt64], failed: Bool) in
            var seen: [UInt64] = []
            var iterator = stream.makeAsyncIterator()
            do {
                if let first = try await iterator.next() { seen.append(first.seq) }
                for await _ in gate { break }
                while let applied = try await iterator.next() { seen.append(applied.seq) }
            } catch {
                return (seen, true)
            }
            return (seen, false)
        }
        // The log is empty, so the follower goes live at once.
        while store.followers.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        _ = try await store.append(notify("a", 1))  // seq 1
        // Twenty of b's (seqs 2…21) overflow no buffer of a's follower; then a's 22…30 do.
        for id in 2...21 { _ = try await store.append(notify("b", Int64(id))) }
        for id in 22...30 { _ = try await store.append(notify("a", Int64(id))) }
        open.yield(())
        let (seen, failed) = await consumer.value
        #expect(failed, "the follower fell behind")
        #expect(seen == [1, 22, 23, 24, 25])
        var rest = store.appliedEvents(after: try #require(seen.last), account: "a", catchingUp: false).makeAsyncIterator()
        for expected in UInt64(26)...30 { #expect(try await rest.next()?.seq == expected) }
        store.close()
    }

    @Test("catching up, a follower that falls behind its buffer reads what it missed from the log and goes on, no error")
    func catchingUpFollowerMissesNothing() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.path)
        var iterator = store.appliedEvents(after: 0, account: "a", catchingUp: true, bufferLimit: 4).makeAsyncIterator()
        _ = try await store.append(notify("a", 1))
        #expect(try await iterator.next()?.seq == 1)  // now live
        // 40 of a's in one commit, and b's between: ten times the buffer.
        var batch: [(Event, Source)] = []
        for id in 2...81 { batch.append((notify(id % 2 == 0 ? "a" : "b", Int64(id)), .library)) }
        let appended = try await store.append(contentsOf: batch)
        var received: [UInt64] = []
        for _ in 0..<40 { received.append(try #require(try await iterator.next()).seq) }
        #expect(received == appended.filter { $0.event.account == "a" }.map(\.seq))
        // Live again after catching up.
        let next = try await store.append(notify("a", 82))
        #expect(try await iterator.next()?.seq == next.seq)
        store.close()
        #expect(try await iterator.next() == nil)
    }
}
