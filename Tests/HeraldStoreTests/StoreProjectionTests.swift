import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import Testing
import HeraldTestSupport

/// The conformance cases (`Tests/Fixtures/conformance`).
enum Conformance {
    static let directory = Fixtures.conformance

    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".events.jsonl") }.map { String($0.dropLast(".events.jsonl".count)) }.sorted()
    }

    static func lines(_ name: String, _ suffix: String) throws -> [String] {
        let text = try String(contentsOf: directory.appendingPathComponent(name + suffix), encoding: .utf8)
        return text.split(separator: "\n").map(String.init)
    }

    static func json(_ text: String) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! NSObject
    }
}

@Suite("Store with projection")
struct StoreProjectionTests {
    @Test("the conformance cases hold through the store, live and after reopening", arguments: Conformance.names)
    func conformance(name: String) throws {
        let dir = TemporaryDirectory()
        let events = try Conformance.lines(name, ".events.jsonl").map { try Event(json: $0) }
        let expected = try Conformance.json(try Conformance.lines(name, ".expected.json").joined())
        let expectedUpdates = try? Conformance.lines(name, ".updates.jsonl")
        do {
            let store = try Store(path: dir.path)
            // Half one by one, half as one batch: both paths must give the same updates.
            var applied = try events.prefix(events.count / 2).map { try store.append($0) }
            applied += try store.append(contentsOf: events.dropFirst(events.count / 2).map { ($0, .library) })
            #expect(applied.map(\.seq) == Array(1...UInt64(events.count)))
            if let expectedUpdates {
                for (line, result) in zip(expectedUpdates, applied) {
                    let printed = Projection.updatesJSON(seq: result.seq, account: result.event.account, updates: result.updates)
                    #expect(try Conformance.json(printed) == Conformance.json(line), "seq \(result.seq)")
                }
            }
            #expect(try Conformance.json(store.projection.stateJSON()) == expected)
        }
        let reopened = try Store(path: dir.path)
        #expect(try Conformance.json(reopened.projection.stateJSON()) == expected)
    }

    @Test("an audit of an account no event names throws unknownAccount; of a named one, an empty timeline when nothing touched the target")
    func auditOfUnknownAccount() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(Event(account: "a", .notify(.init(chat: "c", kind: .message, id: 1, date: 100))))
        #expect(try store.audit(account: "a", target: .notification(99)).isEmpty)
        #expect(try store.audit(account: "a", target: .notification(1)).count == 1)
        #expect {
            _ = try store.audit(account: "b", target: .notification(1))
        } throws: { error in
            guard let error = error as? StoreError, error.code == .unknownAccount, let path = error.path, let account = error.account else { return false }
            return path == dir.path && account == "b"
        }
    }

    @Test("an audit of a chat no event of the account names throws unknownChat with its chats; a named one, even a read-only name, gets its timeline")
    func auditOfUnknownChat() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(Event(account: "a", .notify(.init(chat: "c2", kind: .message, id: 1, date: 100))))
        try store.append(Event(account: "a", .notify(.init(chat: "c1", kind: .message, id: 1, date: 100))))
        try store.append(Event(account: "a", .read(chat: "r", maxId: 5)))
        try store.append(Event(account: "b", .notify(.init(chat: "elsewhere", kind: .message, id: 1, date: 100))))
        for chat in ["zz", "elsewhere"] {
            #expect {
                _ = try store.audit(account: "a", target: .object(chat: chat, objectId: nil))
            } throws: { error in
                guard let error = error as? StoreError, error.code == .unknownChat, let path = error.path, let account = error.account, let named = error.chat, let chats = error.chats else { return false }
                return path == dir.path && account == "a" && named == chat && chats == ["c1", "c2", "r"]
            }
        }
        #expect(try store.audit(account: "a", target: .object(chat: "c1", objectId: 7)).isEmpty)
        #expect(try store.audit(account: "a", target: .object(chat: "r", objectId: nil)).count == 1)
    }

    @Test("followers receive every applied event in order")
    func followers() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        let stream = store.appliedEvents()
        let events = randomEvents(count: 50, seed: 9)
        var appended: [Applied] = []
        for event in events { appended.append(try await store.append(event)) }
        #expect(await stream.first(events.count) == appended)
    }

    @Test("a read-only store catches up with a writer's commits")
    func refresh() throws {
        let dir = TemporaryDirectory()
        let writer = try Store(path: dir.path)
        let events = randomEvents(count: 300, seed: 10)
        try writer.append(contentsOf: events.prefix(100).map { ($0, .library) })
        var options = Store.Options()
        options.readOnly = true
        let reader = try Store(path: dir.path, options: options)
        #expect(reader.projection == writer.projection)
        try writer.append(contentsOf: events.dropFirst(100).map { ($0, .library) })
        let caught = try reader.refresh()
        #expect(caught.count == 200)
        #expect(reader.lastSeq == 300)
        #expect(reader.projection == writer.projection)
        #expect(reader.projection.stateJSON() == writer.projection.stateJSON())
    }
}

@Suite("Bulk appends")
struct BulkAppendTests {
    @Test("appendBatch reaches the same state as append(contentsOf:) and still feeds followers")
    func sameState() async throws {
        let events = randomEvents(count: 2_000, seed: 21).map { ($0, Source.library) }
        let a = TemporaryDirectory(), b = TemporaryDirectory()
        let withUpdates = try Store(path: a.path)
        let bulk = try Store(path: b.path)
        var expectedUpdates: [Applied] = []
        for start in stride(from: 0, to: events.count, by: 500) {
            expectedUpdates += try await withUpdates.append(contentsOf: Array(events[start..<(start + 500)]))
        }
        #expect(try bulk.appendBatch(Array(events[..<1_000])) == 1...1_000)
        let follower = bulk.appliedEvents()
        #expect(try bulk.appendBatch(Array(events[1_000...])) == 1_001...2_000)
        #expect(try bulk.appendBatch([]) == nil)
        #expect(bulk.projection == withUpdates.projection)
        #expect(bulk.projection.stateJSON() == withUpdates.projection.stateJSON())
        #expect(await follower.first(1_000) == Array(expectedUpdates[1_000...]))
    }
}
