import Foundation
import HeraldStore
import HeraldTestSupport
import Testing
@testable import HeraldServer

/// `POST /v1/events` and `POST /v1/ingest` over real HTTP on loopback, into a real store.
@Suite("serve: ingest endpoints", .serverThreads)
struct IngestEndpointTests {
    @Test("events are durable before 2xx: their seqs are in the store after a restart")
    func eventsDurable() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let body = (1...3).map { notifyLine(id: $0) }.joined(separator: "\n")
        let response = try await server.request(.POST, "/v1/events", body: body)
        #expect(response.status == 200)
        #expect(object(response.body)["seqs"] as? [Int] == [1, 2, 3])
        await server.stop()
        let store = try Store(path: directory.path)
        let records = try await store.history.records()
        #expect(records.map(\.seq) == [1, 2, 3])
        #expect(records.map(\.source.format) == ["herald", "herald", "herald"])
        #expect(store.account("tg:1")?.unread.unread == 3)
    }

    @Test("a JSON array and a pretty-printed JSON event are accepted")
    func arrayAndDocument() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let array = "[\n" + [notifyLine(id: 1), notifyLine(id: 2)].joined(separator: ",\n") + "\n]"
        let first = try await server.request(.POST, "/v1/events", body: array, headers: [("Content-Type", "application/json")])
        #expect(object(first.body)["seqs"] as? [Int] == [1, 2])
        let pretty = notifyLine(id: 3).replacingOccurrences(of: ",", with: ",\n  ")
        let second = try await server.request(.POST, "/v1/events", body: pretty, headers: [("Content-Type", "application/json")])
        #expect(second.status == 200)
        #expect(object(second.body)["seqs"] as? [Int] == [3])
        await server.stop()
    }

    @Test("a payload's digest is that of its own bytes in the body, whether it came alone or in an array")
    func digestSameAloneOrInArray() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        // Spaces and key order that re-serialising would change.
        let payload = #"{ "type": "notify", "date": 5, "account": "tg:1", "chat": "c", "kind": "message", "id": 1 }"#
        let array = "[\n  " + payload + ",\n  " + notifyLine(id: 2) + "\n]"
        #expect(try await server.request(.POST, "/v1/events", body: array).status == 200)
        #expect(try await server.request(.POST, "/v1/events", body: payload).status == 200)
        let raw = try await server.request(.POST, "/v1/ingest?format=herald", body: "[" + payload + "]")
        #expect(raw.status == 200)
        await server.stop()
        let records = try await Store(path: directory.path).history.records()
        #expect(records.count == 4)
        let expected = Source(format: "herald", payload: Array(payload.utf8))
        #expect(records[0].source == expected)
        #expect(records[2].source == expected)
        #expect(records[3].source == expected)
        #expect(records[1].source != expected)
    }

    @Test("one bad event: 400 naming the line and field, and nothing stored")
    func badEventNamesField() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let bad = #"{"type":"notify","account":"tg:1","chat":"","kind":"message","id":2,"date":5}"#
        let response = try await server.request(.POST, "/v1/events", body: notifyLine(id: 1) + "\n" + bad)
        #expect(response.status == 400)
        let body = object(response.body)
        let error = body["error"] as? [String: Any]
        #expect(error?["field"] as? String == "chat")
        #expect(body["line"] as? Int == 2)
        await server.stop()
        #expect(try await Store(path: directory.path).history.records().isEmpty)
    }

    @Test("raw payloads: valid ones appended, a bad one quarantined and named; all bad is 422")
    func ingestQuarantines() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let matrix = #"{"notification":{"event_id":"$e1","room_id":"!r:x","type":"m.room.message","sender":"@a:x","content":{"msgtype":"m.text","body":"hello"},"counts":{"unread":1},"devices":[{"app_id":"a","pushkey":"k"}]}}"#
        let broken = #"{"notification":{"event_id":"$x","devices":[]}}"#
        let response = try await server.request(.POST, "/v1/ingest?format=matrix&account=mx:1", body: matrix + "\n" + broken)
        #expect(response.status == 200)
        let body = object(response.body)
        #expect((body["seqs"] as? [Int])?.isEmpty == false)
        let rejected = body["rejected"] as? [[String: Any]]
        #expect(rejected?.count == 1)
        #expect(rejected?.first?["line"] as? Int == 2)
        #expect(rejected?.first?["field"] as? String == "notification.room_id")
        #expect(rejected?.first?["quarantine"] as? Int == 1)
        let allBad = try await server.request(.POST, "/v1/ingest?format=matrix&account=mx:1", body: broken)
        #expect(allBad.status == 422)
        #expect((object(allBad.body)["error"] as? [String: Any])?["field"] as? String == "notification.room_id")
        let unknownFormat = try await server.request(.POST, "/v1/ingest?format=nope", body: matrix)
        #expect(unknownFormat.status == 400)
        #expect((object(unknownFormat.body)["error"] as? [String: Any])?["field"] as? String == "format")
        await server.stop()
        let store = try Store(path: directory.path)
        let quarantined = try store.quarantine.all()
        #expect(quarantined.count == 2)
        #expect(quarantined.first?.account == "mx:1")
        #expect(quarantined.first?.raw == Array(broken.utf8))
    }

    @Test("a retried request with the same Idempotency-Key is stored once, across a restart")
    func idempotencyAcrossRestart() async throws {
        let directory = TemporaryDirectory("serve")
        let key = [("Idempotency-Key", "req-1")]
        let body = notifyLine(id: 1) + "\n" + notifyLine(id: 2)
        var server = try await LiveServer(path: directory.path)
        let first = try await server.request(.POST, "/v1/events", body: body, headers: key)
        #expect(first.status == 200)
        #expect(first.headers.first(name: "Idempotent-Replayed") == nil)
        let again = try await server.request(.POST, "/v1/events", body: body, headers: key)
        #expect(again.status == 200)
        #expect(again.body == first.body)
        #expect(again.headers.first(name: "Idempotent-Replayed") == "true")
        await server.stop()
        server = try await LiveServer(path: directory.path)
        let afterRestart = try await server.request(.POST, "/v1/events", body: body, headers: key)
        #expect(afterRestart.body == first.body)
        let misuse = try await server.request(.POST, "/v1/events", body: notifyLine(id: 3), headers: key)
        #expect(misuse.status == 422)
        let fresh = try await server.request(.POST, "/v1/events", body: body, headers: [("Idempotency-Key", "req-2")])
        #expect(object(fresh.body)["seqs"] as? [Int] == [3, 4])
        await server.stop()
        #expect(try await Store(path: directory.path).history.records().count == 4)
    }

    @Test("a retried ingest gets the stored reply, quarantine ids included, and quarantines nothing again")
    func idempotentIngest() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let matrix = #"{"notification":{"event_id":"$e1","room_id":"!r:x","type":"m.room.message","sender":"@a:x","content":{"msgtype":"m.text","body":"hello"},"devices":[]}}"#
        let broken = #"{"notification":{"event_id":"$x","devices":[]}}"#
        let key = [("Idempotency-Key", "ingest-1")]
        let first = try await server.request(.POST, "/v1/ingest?format=matrix&account=mx:1", body: matrix + "\n" + broken, headers: key)
        #expect((object(first.body)["rejected"] as? [[String: Any]])?.first?["quarantine"] as? Int == 1)
        let retry = try await server.request(.POST, "/v1/ingest?format=matrix&account=mx:1", body: matrix + "\n" + broken, headers: key)
        #expect(retry.body == first.body)
        #expect(retry.headers.first(name: "Idempotent-Replayed") == "true")
        await server.stop()
        let store = try Store(path: directory.path)
        #expect(try store.quarantine.all().count == 1)
        #expect(try await store.history.records().count == (object(first.body)["seqs"] as? [Int])?.count)
    }

    @Test("a key left pending by a crash after the commit answers with the records already stored")
    func pendingKeyRecovery() async throws {
        let directory = TemporaryDirectory("serve")
        let body = notifyLine(id: 1) + "\n" + notifyLine(id: 2)
        // The crash: the append committed (a plain request stores the records) but the reply
        // was never recorded; the entry says pending, with the seq before the append.
        var server = try await LiveServer(path: directory.path)
        _ = try await server.request(.POST, "/v1/events", body: notifyLine(id: 9))
        let entry = IdempotencyEntry(
            request: Idempotency.fingerprint(method: "POST", path: "/v1/events", query: nil, body: Array(body.utf8)),
            seqBefore: 1, reply: nil, createdAt: Int64(Date().timeIntervalSince1970 * 1000))
        try server.server.host.tables.put(.idempotency, Idempotency.slot(endpoint: "/v1/events", key: "crashed"), entry)
        let stored = try await server.request(.POST, "/v1/events", body: body)
        #expect(object(stored.body)["seqs"] as? [Int] == [2, 3])
        await server.stop()
        server = try await LiveServer(path: directory.path)
        let retry = try await server.request(.POST, "/v1/events", body: body, headers: [("Idempotency-Key", "crashed")])
        #expect(retry.status == 200)
        #expect(object(retry.body)["seqs"] as? [Int] == [2, 3])
        #expect(retry.headers.first(name: "Idempotent-Replayed") == "true")
        await server.stop()
        #expect(try await Store(path: directory.path).history.records().count == 3)
    }

    @Test("bodies over the limit get 413")
    func sizeLimit() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) { $0.maxBodyBytes = 1024 }
        let body = (1...40).map { notifyLine(id: $0) }.joined(separator: "\n")
        let response = try await server.request(.POST, "/v1/events", body: body)
        #expect(response.status == 413)
        await server.stop()
    }
}

/// Shutdown: what `run` does once it stops.
@Suite("serve: shutdown", .serverThreads)
struct ShutdownTests {
    @Test("stopping takes a final snapshot at the last seq and releases the store")
    func finalSnapshot() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1) + "\n" + notifyLine(id: 2)).status == 200)
        await server.stop()
        #expect(!server.server.host.isOpen)
        // The writer lock is free: a writable open succeeds, and sees the snapshot.
        let store = try Store(path: directory.path)
        #expect(try store.snapshots.seqs() == [2])
    }
}
