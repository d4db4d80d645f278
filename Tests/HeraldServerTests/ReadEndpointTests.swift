import AsyncHTTPClient
import Foundation
import HeraldStore
import HeraldTestSupport
import NIOCore
import Testing

/// State, active, counts, audit, stats and the SSE update stream.
@Suite("serve: read endpoints", .serverThreads)
struct ReadEndpointTests {
    @Test("state, active and counts reflect the appended events; audit names the target's events")
    func views() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let body = [notifyLine(id: 1), notifyLine(id: 2), notifyLine(chat: "user:6", id: 3),
                    #"{"type":"read","account":"tg:1","chat":"user:5","maxId":1}"#].joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: body).status == 200)

        let state = object(try await server.request(.GET, "/v1/accounts/tg:1/state").body)
        #expect(state["seq"] as? Int == 4)
        let account = (state["accounts"] as? [[String: Any]])?.first
        #expect(account?["account"] as? String == "tg:1")
        #expect((account?["unread"] as? [String: Any])?["unread"] as? Int == 2)

        let active = object(try await server.request(.GET, "/v1/accounts/tg:1/active").body)
        let groups = active["groups"] as? [[String: Any]]
        #expect(Set(groups?.compactMap { $0["chat"] as? String } ?? []) == ["user:5", "user:6"])

        let counts = object(try await server.request(.GET, "/v1/accounts/tg:1/counts").body)
        #expect((counts["unread"] as? [String: Any])?["unread"] as? Int == 2)
        // The clock (SEMANTICS 1.2 §2): the newest notify's date, 1_754_385_290 + 3.
        #expect(counts["clock"] as? Int == 1_754_385_293)
        let chats = counts["chats"] as? [[String: Any]]
        #expect(chats?.first(where: { $0["chat"] as? String == "user:5" })?["unread"] as? Int == 1)

        let audit = try await server.request(.GET, "/v1/audit?account=tg:1&chat=user:5&object=1")
        #expect(audit.status == 200)
        let lines = audit.body.split(separator: "\n").map { object(String($0)) }
        #expect(lines.compactMap { $0["seq"] as? Int } == [1, 4])

        let stats = object(try await server.request(.GET, "/v1/stats").body)
        #expect(stats["lastSeq"] as? Int == 4)
        #expect((stats["byType"] as? [String: Any])?["notify"] as? Int == 3)
        #expect(try await server.request(.GET, "/v1/accounts/tg:9/state").status == 404)
        await server.stop()
    }

    /// Reads SSE events (`id`, `data`) from a streaming response until `count` have arrived.
    struct EventReader {
        var iterator: HTTPClientResponse.Body.AsyncIterator
        var pending = ""

        mutating func next(_ count: Int) async throws -> [(id: UInt64, data: String)] {
            var events: [(UInt64, String)] = []
            while events.count < count {
                while let end = pending.range(of: "\n\n") {
                    let block = pending[..<end.lowerBound]
                    pending = String(pending[end.upperBound...])
                    var id: UInt64?
                    var data = ""
                    for line in block.split(separator: "\n") {
                        if line.hasPrefix("id: ") { id = UInt64(line.dropFirst(4)) }
                        if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
                    }
                    if let id { events.append((id, data)) }
                    if events.count == count { return events }
                }
                guard let buffer = try await iterator.next() else { break }
                pending += String(buffer: buffer)
            }
            return events
        }
    }

    static func watchdog(_ server: LiveServer, seconds: Int64 = 300) -> Task<Void, Never> {
        Task(executorPreference: ThreadExecutor.servers) {
            guard (try? await Task.sleep(for: .seconds(seconds))) != nil else { return }
            await server.stop()
        }
    }

    func openStream(_ server: LiveServer, account: String, lastEventID: UInt64?, timeout: Int64 = 300) async throws -> EventReader {
        var request = HTTPClientRequest(url: server.base + "/v1/accounts/\(account)/updates")
        request.headers.add(name: "Authorization", value: "Bearer \(LiveServer.adminToken)")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: "\(lastEventID)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
        #expect(response.status.code == 200)
        #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
        return EventReader(iterator: response.body.makeAsyncIterator())
    }

    @Test("the update stream replays from Last-Event-ID, follows live, and resumes across a server restart exactly once")
    func updateStreamResumes() async throws {
        let directory = TemporaryDirectory("serve")
        var server = try await LiveServer(path: directory.path)
        // A stream that never gets an event must fail the test, not hang it: the watchdog
        // stops the server (ending the stream) if the test is not done in time.
        var watchdog = Self.watchdog(server)
        // Seqs 1…3: tg:1, tg:2 (another account: never in tg:1's stream), tg:1.
        let first = [notifyLine(id: 1), notifyLine(account: "tg:2", id: 1), notifyLine(id: 2)].joined(separator: "\n")
        #expect(try await server.request(.POST, "/v1/events", body: first).status == 200)

        var stream = try await openStream(server, account: "tg:1", lastEventID: 0)
        let replayed = try await stream.next(2)
        #expect(replayed.map(\.id) == [1, 3])
        #expect(try await server.request(.GET, "/metrics", token: nil).body.contains("herald_sse_clients 1"))
        #expect(object(replayed[0].data)["account"] as? String == "tg:1")
        #expect(((object(replayed[0].data)["updates"] as? [[String: Any]])?.isEmpty) == false)

        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 3)).status == 200)
        let live = try await stream.next(1)
        #expect(live.map(\.id) == [4])

        // The server restarts; meanwhile nothing is lost: the client resumes after 4.
        watchdog.cancel()
        await server.stop()
        server = try await LiveServer(path: directory.path)
        watchdog = Self.watchdog(server)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 4) + "\n" + notifyLine(id: 5)).status == 200)
        stream = try await openStream(server, account: "tg:1", lastEventID: 4)
        #expect(try await stream.next(2).map(\.id) == [5, 6])
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 6)).status == 200)
        #expect(try await stream.next(1).map(\.id) == [7])

        // The replayed updates are those the live stream sent: compare with a fresh replay.
        var again = try await openStream(server, account: "tg:1", lastEventID: 3)
        let fromLog = try await again.next(1)
        #expect(fromLog.map(\.data) == live.map(\.data))
        watchdog.cancel()
        await server.stop()
    }

    @Test("a stream resumed after N events gets exactly the account's later events, across log pages and then live")
    func resumedStreamGetsTheMissingOnes() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let watchdog = Self.watchdog(server)
        defer { watchdog.cancel() }
        // Seqs 1…1,200: every third event is tg:2's, the rest tg:1's.
        let lines = (1...1_200).map { notifyLine(account: $0 % 3 == 0 ? "tg:2" : "tg:1", id: $0) }
        #expect(try await server.request(.POST, "/v1/events", body: lines.joined(separator: "\n")).status == 200)
        var stream = try await openStream(server, account: "tg:1", lastEventID: 500)
        let missing = (501...1_200).filter { $0 % 3 != 0 }.map(UInt64.init)
        #expect(try await stream.next(missing.count).map(\.id) == missing)
        let live = (1_201...1_206).map { notifyLine(account: $0 % 3 == 0 ? "tg:2" : "tg:1", id: $0) }
        #expect(try await server.request(.POST, "/v1/events", body: live.joined(separator: "\n")).status == 200)
        #expect(try await stream.next(4).map(\.id) == [1_201, 1_202, 1_204, 1_205])
        await server.stop()
    }

    @Test("an open stream gets every event of a bulk append larger than the store's follower buffer")
    func bulkAppendBeyondTheBuffer() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        // About 15 s in a debug build alone; much longer beside the rest of the suite.
        let watchdog = Self.watchdog(server, seconds: 300)
        defer { watchdog.cancel() }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1)).status == 200)
        var stream = try await openStream(server, account: "tg:1", lastEventID: 1, timeout: 300)
        let count = HeraldStore.Store.followerBufferLimit + 500
        // One chat each, so that each event's updates stay one line of a few hundred bytes.
        let lines = (2...(count + 1)).map { notifyLine(chat: "user:\($0)", id: $0) }
        #expect(try await server.request(.POST, "/v1/events", body: lines.joined(separator: "\n")).status == 200)
        let received = try await stream.next(count).map(\.id)
        #expect(received == Array(2...UInt64(count + 1)))
        await server.stop()
    }
}
