import Foundation
import HeraldStore
import HeraldTestSupport
import Testing

/// Snapshot and compaction through the admin API while serving.
@Suite("serve: admin", .serverThreads)
struct AdminTests {
    @Test("compact while serving archives the log below a fresh snapshot; reads and appends go on")
    func compactWhileServing() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let body = (1...50).map { notifyLine(chat: "user:\($0 % 5)", id: $0) }.joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)
        let before = try await server.request(.GET, "/v1/accounts/tg:1/state").body

        let snapshot = try await server.request(.POST, "/v1/admin/snapshot")
        #expect(object(snapshot.body)["seq"] as? Int == 50)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 51)).status == 200)
        let compacted = try await server.request(.POST, "/v1/admin/compact")
        #expect(compacted.status == 200, "\(compacted.body)")
        let report = object(compacted.body)
        #expect(report["base"] as? Int == 51)
        #expect(report["recordsArchived"] as? Int == 51)

        // Served again from the reopened store: same state plus the later event, history kept.
        #expect(try await server.request(.GET, "/readyz", token: nil).status == 200)
        let after = object(try await server.request(.GET, "/v1/accounts/tg:1/state").body)
        #expect(after["seq"] as? Int == 51)
        #expect(object(before)["seq"] as? Int == 50)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 52)).status == 200)
        let audit = try await server.request(.GET, "/v1/audit?account=tg:1&chat=user:1&object=1")
        #expect(audit.body.split(separator: "\n").count == 1)
        await server.stop()
        let store = try Store(path: directory.path)
        #expect(try store.history.bounds().hasArchive)
        #expect(try store.history.bounds().firstSeqInLog == 52)
        var all: [UInt64] = []
        try store.history.forEach { all.append($0.seq); return true }
        #expect(all == Array(1...52))
    }

    @Test("snapshots are taken on the schedule while events arrive, and not when none did")
    func scheduledSnapshots() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path) { $0.snapshotSeconds = 1 }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1) + "\n" + notifyLine(id: 2)).status == 200)
        var seqs: [Int] = []
        for _ in 0..<50 where seqs.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            seqs = object(try await server.request(.GET, "/v1/stats").body)["snapshotSeqs"] as? [Int] ?? []
        }
        #expect(seqs == [2])
        try await Task.sleep(for: .milliseconds(1500))
        #expect(object(try await server.request(.GET, "/v1/stats").body)["snapshotSeqs"] as? [Int] == [2])
        await server.stop()
    }

    @Test("an update stream open across a compaction ends; resuming by Last-Event-ID gets every later update once")
    func streamAcrossCompaction() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let watchdog = ReadEndpointTests.watchdog(server)
        defer { watchdog.cancel() }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1) + "\n" + notifyLine(id: 2)).status == 200)
        var stream = try await ReadEndpointTests().openStream(server, account: "tg:1", lastEventID: 0)
        #expect(try await stream.next(2).map(\.id) == [1, 2])
        #expect(try await server.request(.POST, "/v1/admin/compact").status == 200)
        // The stream followed the store that compaction released: it ends.
        #expect(try await stream.next(1).isEmpty)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 3)).status == 200)
        stream = try await ReadEndpointTests().openStream(server, account: "tg:1", lastEventID: 2)
        #expect(try await stream.next(1).map(\.id) == [3])
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 4)).status == 200)
        #expect(try await stream.next(1).map(\.id) == [4])
        await server.stop()
    }
}
