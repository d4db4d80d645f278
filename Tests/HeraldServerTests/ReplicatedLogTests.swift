import AsyncHTTPClient
import Foundation
import HeraldEvents
import HeraldStore
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// `herald serve --replicated-log`: the log on a PostgreSQL primary with a synchronous
/// standby (``PostgresServers``), nodes as `herald serve` processes.
@Suite("replicated log: herald serve on PostgreSQL", .serverThreads, .enabled(if: PostgresServers.isInstalled))
struct ReplicatedLogTests {
    static let token = "replicated-admin-token"
    typealias Node = HeraldProcess

    /// A node of log `logId` on the store `store`.
    func node(_ store: String, _ url: String, logId: String = "p1", _ extra: [String] = []) throws -> Node {
        try ServeProcessTests.serveProcess(
            store: store, environment: ["HERALD_ADMIN_TOKEN": Self.token],
            arguments: ["serve", "--store", store, "--listen", "127.0.0.1:0", "--log-level", "warning", "--replicated-log", url, "--log-id", logId] + extra)
    }

    /// `herald` run to its end, with `environment` added.
    func herald(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try run(HeraldBinary.path, arguments)
    }

    /// A request to a node; `timeout` seconds at most.
    func send(
        _ port: Int, _ method: HTTPMethod, _ path: String, _ body: String? = nil, headers: [(String, String)] = [], timeout: Int64 = 5,
        bearer: String = ReplicatedLogTests.token
    ) async throws -> (status: Int, headers: HTTPHeaders, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
        let bytes = try await response.body.collect(upTo: 1 << 22)
        return (Int(response.status.code), response.headers, String(buffer: bytes))
    }

    /// The seqs a `POST /v1/events` reply gives.
    func seqs(_ body: String) -> [UInt64] {
        guard let data = body.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let seqs = object["seqs"] as? [NSNumber]
        else { return [] }
        return seqs.map(\.uint64Value)
    }

    /// `herald state --json` of a store no server holds.
    func state(_ store: String) throws -> String {
        let result = try herald(["state", "--store", store, "--json"])
        #expect(result.status == 0, "\(result.output)")
        return result.output
    }

    func count(_ pg: PostgresServers, port: Int? = nil, logId: String = "p1") throws -> (count: Int, max: Int) {
        let line = try pg.psql(port: port, "SELECT count(*) || ' ' || coalesce(max(seq), 0) FROM herald_records WHERE log_id = '\(logId)'")
        let parts = line.split(separator: " ").compactMap { Int($0) }
        return (parts[0], parts[1])
    }

    @Test("commits go to PostgreSQL; a replacement of a killed node catches up byte-identical, idempotent retries get the first reply")
    func replacement() async throws {
        let pg = try PostgresServers()
        let directory = TemporaryDirectory("replog-replace")
        let first = try node(directory.child("a"), pg.url())
        #expect(first.port > 0)
        for id in 1...5 {
            let reply = try await send(first.port, .POST, "/v1/events", notifyLine(id: id) + "\n" + notifyLine(account: "tg:2", id: id))
            #expect(reply.status == 200, "\(reply.body)")
        }
        let keyed = try await send(first.port, .POST, "/v1/events", notifyLine(id: 6), headers: [("Idempotency-Key", "k-1")])
        #expect(keyed.status == 200)
        #expect(seqs(keyed.body) == [11])
        #expect(try count(pg) == (11, 11))
        #expect(try await send(first.port, .GET, "/readyz").status == 200)
        // Service tables: a token and a Telegram key, made on the first node.
        let created = try await send(first.port, .POST, "/v1/admin/tokens", #"{"name":"reader","scopes":["read:*"]}"#)
        #expect(created.status == 201)
        let reader = try #require(
            (try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any])?["token"] as? String)
        var key = SplitMix64(seed: 42)
        let keyBytes = (0..<256).map { _ in UInt8(truncatingIfNeeded: key.next()) }
        let base64url = Data(keyBytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(try await send(first.port, .POST, "/v1/admin/keys", #"{"key":"\#(base64url)","account":"tg:8"}"#).status == 201)
        let keys = try await send(first.port, .GET, "/v1/admin/keys").body

        #expect(first.signal(SIGKILL) == SIGKILL)
        let before = try state(directory.child("a"))
        try FileManager.default.removeItem(atPath: directory.child("a"))

        // The owner was heard from a moment ago: without --take-over the start is refused.
        let refused = try herald(["serve", "--store", directory.child("b"), "--listen", "127.0.0.1:0", "--replicated-log", pg.url(), "--log-id", "p1"])
        #expect(refused.status != 0)
        #expect(refused.output.contains("--take-over"), "\(refused.output)")
        #expect(!refused.output.contains(PostgresServers.password))

        let second = try node(directory.child("b"), pg.url(), ["--take-over"])
        #expect(second.port > 0)
        let retried = try await send(second.port, .POST, "/v1/events", notifyLine(id: 6), headers: [("Idempotency-Key", "k-1")])
        #expect(retried.status == 200)
        #expect(retried.body == keyed.body)
        #expect(retried.headers["Idempotent-Replayed"].first == "true")
        #expect(try await send(second.port, .GET, "/v1/accounts/tg:1/state", bearer: reader).status == 200)
        #expect(try await send(second.port, .GET, "/v1/admin/keys").body == keys)
        #expect(keys.contains("tg:8"))
        #expect(try count(pg) == (11, 11))
        #expect(second.signal(SIGTERM) == 0)
        #expect(try state(directory.child("b")) == before)
    }

    @Test("a second node taking the log over fences the first; no seq is written twice")
    func takeOver() async throws {
        let pg = try PostgresServers(standby: false)
        let directory = TemporaryDirectory("replog-fence")
        let first = try node(directory.child("a"), pg.url())
        #expect(try await send(first.port, .POST, "/v1/events", notifyLine(id: 1)).status == 200)
        let second = try node(directory.child("b"), pg.url(), ["--take-over"])
        #expect(second.port > 0)
        let fenced = try await send(first.port, .POST, "/v1/events", notifyLine(id: 2))
        #expect(fenced.status == 503, "\(fenced.body)")
        #expect(fenced.body.contains("fenced"), "\(fenced.body)")
        #expect(try await send(first.port, .GET, "/readyz").status == 503)
        #expect(try await send(second.port, .POST, "/v1/events", notifyLine(id: 3)).status == 200)
        #expect(try await send(first.port, .POST, "/v1/events", notifyLine(id: 4)).status == 503)
        #expect(try count(pg) == (2, 2))
        let owner = try pg.psql("SELECT epoch FROM herald_logs WHERE log_id = 'p1'")
        #expect(owner == "2")
    }

    @Test("a commit whose synchronous wait is cancelled is not acknowledged; writes resume once the standby is back")
    func cancelledSynchronousWait() async throws {
        let pg = try PostgresServers()
        let directory = TemporaryDirectory("replog-cancel")
        let first = try node(directory.child("a"), pg.url())
        #expect(try await send(first.port, .POST, "/v1/events", notifyLine(id: 1)).status == 200)
        pg.signal("standby", SIGKILL)
        let answered = Load()
        let waiting = Task {
            defer { answered.stop() }
            return try await send(first.port, .POST, "/v1/events", notifyLine(id: 2), timeout: 30)
        }
        // The commit waits for a standby that does not come: nothing is acknowledged.
        var waiters = ""
        for _ in 0..<100 where waiters.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            waiters = try pg.psql("SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
        }
        #expect(!waiters.isEmpty)
        try await Task.sleep(for: .milliseconds(500))
        #expect(!answered.stopped, "answered while no standby confirmed")
        // Cancel every wait for the standby (the commit's, or a heartbeat's before it) until
        // the request is answered.
        for _ in 0..<100 where !answered.stopped {
            try pg.psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
            try await Task.sleep(for: .milliseconds(100))
        }
        let reply = try await waiting.value
        #expect(reply.status == 503, "\(reply.body)")
        #expect(reply.headers["Retry-After"].first != nil)
        try pg.restartStandby()
        var status = 0
        for id in 3..<60 where status != 200 {
            try await Task.sleep(for: .milliseconds(200))
            status = try await send(first.port, .POST, "/v1/events", notifyLine(id: id), timeout: 10).status
        }
        #expect(status == 200)
    }

    @Test("every acknowledged event of a concurrent load survives SIGKILL of the primary and promotion of the standby")
    func primaryFailover() async throws {
        let pg = try PostgresServers()
        let directory = TemporaryDirectory("replog-failover")
        let first = try node(directory.child("a"), pg.url())
        let load = Load()
        let port = first.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for producer in 0..<8 {
                group.addTask {
                    var id = producer * 100_000
                    while !load.stopped {
                        id += 1
                        if let reply = try? await send(port, .POST, "/v1/events", notifyLine(id: id), timeout: 3), reply.status == 200 {
                            let seqs = seqs(reply.body)
                            if let seq = seqs.first { load.acknowledge(seq: seq, id: id) }
                        } else {
                            try? await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
            // At least 1.5 s of load, and until a few events are acknowledged (a loaded
            // machine may take seconds to answer the first), 60 s at most.
            try await Task.sleep(for: .milliseconds(1500))
            for _ in 0..<585 where load.acknowledged.count <= 10 { try await Task.sleep(for: .milliseconds(100)) }
            pg.signal("primary", SIGKILL)
            try await Task.sleep(for: .milliseconds(500))
            load.stop()
            try await group.waitForAll()
        }
        let acked = load.acknowledged
        #expect(acked.count > 10)
        try pg.promoteStandby()
        #expect(first.signal(SIGKILL) == SIGKILL)
        let second = try node(directory.child("b"), pg.url(port: pg.standbyPort), ["--take-over"])
        #expect(second.port > 0)
        #expect(second.signal(SIGTERM) == 0)
        let exported = try herald(["export", "--store", directory.child("b")])
        #expect(exported.status == 0)
        var bySeq: [UInt64: String] = [:]
        for line in exported.output.split(separator: "\n") {
            guard let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let seq = (object["seq"] as? NSNumber)?.uint64Value
            else { continue }
            bySeq[seq] = String(line)
        }
        // Gapless, each acknowledged event at its seq, once.
        #expect(bySeq.keys.sorted() == (0..<UInt64(bySeq.count)).map { $0 + 1 })
        for (seq, id) in acked {
            let line = bySeq[seq] ?? ""
            #expect(line.contains("\"id\":\(id),") || line.contains("\"id\":\(id)}"), "acknowledged seq \(seq) (id \(id)) lost")
        }
    }

    @Test("a follower applies commits and its update stream resumes by Last-Event-ID after the leader is replaced")
    func follower() async throws {
        let pg = try PostgresServers(standby: false)
        let directory = TemporaryDirectory("replog-follow")
        let leader = try node(directory.child("a"), pg.url())
        for id in 1...3 { #expect(try await send(leader.port, .POST, "/v1/events", notifyLine(id: id)).status == 200) }
        let follower = try node(directory.child("f"), pg.url(), ["--follow", "--heartbeat-seconds", "1"])
        #expect(follower.port > 0)
        #expect(try await send(follower.port, .POST, "/v1/events", notifyLine(id: 9)).status == 503)
        let seen = try await streamIDs(follower.port, after: 0, until: { $0.contains(3) })
        #expect(seen.contains(3))
        #expect(leader.signal(SIGKILL) == SIGKILL)
        let replacement = try node(directory.child("b"), pg.url(), ["--take-over"])
        for id in 4...5 { #expect(try await send(replacement.port, .POST, "/v1/events", notifyLine(id: id)).status == 200) }
        let resumed = try await streamIDs(follower.port, after: 3, until: { $0.contains(5) })
        #expect(resumed.first == 4)
        #expect(resumed.contains(5))
        let status = try herald(["log", "status", "--replicated-log", pg.url(), "--log-id", "p1", "--json"])
        #expect(status.status == 0)
        #expect(status.output.contains("\"last_seq\":5"), "\(status.output)")
        #expect(!status.output.contains(PostgresServers.password))
    }

    @Test("log prune deletes only what a verified backup covers; a node restored from it catches up, an empty one is told to restore")
    func prune() async throws {
        let pg = try PostgresServers(standby: false)
        let directory = TemporaryDirectory("replog-prune")
        let leader = try node(directory.child("a"), pg.url())
        for id in 1...5 { #expect(try await send(leader.port, .POST, "/v1/events", notifyLine(id: id)).status == 200) }
        #expect(leader.signal(SIGTERM) == 0)
        let before = try state(directory.child("a"))
        let backup = directory.child("backup")
        #expect(try herald(["backup", "--store", directory.child("a"), "--to", backup]).status == 0)
        let log = ["log", "prune", "--replicated-log", pg.url(), "--log-id", "p1"]

        let unbacked = try herald(log + ["--through", "3"])
        #expect(unbacked.status == 1)
        #expect(unbacked.output.contains("--backup"), "\(unbacked.output)")
        let beyond = try herald(log + ["--through", "6", "--backup", backup, "--yes"])
        #expect(beyond.status != 0)
        #expect(beyond.output.contains("ends at seq 5"), "\(beyond.output)")
        let dry = try herald(log + ["--through", "3", "--backup", backup, "--dry-run"])
        #expect(dry.status == 0)
        #expect(dry.output.contains("would delete 3 records"), "\(dry.output)")
        let unconfirmed = try herald(log + ["--through", "3", "--backup", backup])
        #expect(unconfirmed.status == 1)
        #expect(try count(pg) == (5, 5))
        let pruned = try herald(log + ["--through", "3", "--backup", backup, "--yes"])
        #expect(pruned.status == 0, "\(pruned.output)")
        #expect(try count(pg) == (2, 5))
        let status = try herald(["log", "status", "--replicated-log", pg.url(), "--log-id", "p1", "--json"])
        #expect(status.output.contains("\"first_seq\":4"), "\(status.output)")
        #expect(status.output.contains("\"pruned_through\":3"), "\(status.output)")

        // An empty store cannot catch up from seq 4: refused, saying to restore the backup.
        let empty = try herald(["serve", "--store", directory.child("e"), "--listen", "127.0.0.1:0", "--replicated-log", pg.url(), "--log-id", "p1", "--take-over"])
        #expect(empty.status != 0)
        #expect(empty.output.contains("restore a backup"), "\(empty.output)")
        // The backup restored, the node catches up to the same state.
        let restored = try node(backup, pg.url(), ["--take-over"])
        #expect(restored.port > 0)
        #expect(try await send(restored.port, .POST, "/v1/events", notifyLine(id: 6)).status == 200)
        #expect(try count(pg) == (3, 6))
        #expect(restored.signal(SIGTERM) == 0)
        #expect(try state(backup) != before)
    }

    /// A store at `path` whose seq 1 is another event than the log's (the writer lock goes
    /// with the store, when this returns).
    func writeOtherHistory(_ path: String) throws {
        let other = try Store(path: path)
        try other.append(Event(account: "tg:1", .notify(.init(chat: "user:5", kind: .message, id: 77, date: 1_754_385_300, title: "Bob"))))
        other.close()
    }

    /// The seqs (`id:` lines) of a node's update stream for `tg:1`, from `after`, read until
    /// `until` holds of them (10 s at most).
    func streamIDs(_ port: Int, after: UInt64?, until: @escaping ([UInt64]) -> Bool) async throws -> [UInt64] {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/accounts/tg:1/updates")
        request.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
        if let after { request.headers.add(name: "Last-Event-ID", value: "\(after)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        var text = ""
        var ids: [UInt64] = []
        let deadline = Date().addingTimeInterval(10)
        for try await chunk in response.body {
            text += String(buffer: chunk)
            ids = text.split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? UInt64($0.dropFirst(4)) : nil }
            if until(ids) || Date() > deadline { break }
        }
        return ids
    }

    @Test("bad URLs, credentials, hosts, a newer schema and a disagreeing store are refused, naming what, writing nothing")
    func faults() async throws {
        let pg = try PostgresServers(standby: false)
        let directory = TemporaryDirectory("replog-faults")
        let store = directory.child("s")
        func refused(_ url: String, _ extra: [String] = [], store: String? = nil) throws -> String {
            let result = try herald(["serve", "--store", store ?? directory.child("s"), "--listen", "127.0.0.1:0", "--replicated-log", url, "--log-id", "p1"] + extra)
            #expect(result.status != 0, "\(result.output)")
            #expect(!result.output.contains(PostgresServers.password))
            #expect(!result.output.contains("wrong-password"))
            return result.output
        }
        #expect(try refused("mysql://herald@127.0.0.1/herald").contains("postgres://"))
        #expect(try refused("postgres://127.0.0.1:\(pg.primaryPort)/herald").contains("no user"))
        #expect(try refused(pg.url(password: "wrong-password")).contains("password authentication failed"))
        let unused = try freePort()
        #expect(try refused(pg.url(port: unused)).contains("127.0.0.1:\(unused)"))
        #expect(!FileManager.default.fileExists(atPath: store))

        // A node creates the schema; a newer version in the database is refused.
        let leader = try node(directory.child("a"), pg.url())
        #expect(try await send(leader.port, .POST, "/v1/events", notifyLine(id: 1)).status == 200)
        #expect(leader.signal(SIGTERM) == 0)
        try pg.psql("UPDATE herald_schema SET version = 99")
        #expect(try refused(pg.url()).contains("schema version 99"))
        #expect(!FileManager.default.fileExists(atPath: store))
        try pg.psql("UPDATE herald_schema SET version = 1")

        // A store with another history at seq 1: refused naming the seq, neither side changed.
        try writeOtherHistory(store)
        let disagreeing = try refused(pg.url(), ["--take-over"])
        #expect(disagreeing.contains("seq 1"), "\(disagreeing)")
        #expect(try count(pg) == (1, 1))
    }
}

/// The producers of a concurrent load: what was acknowledged (seq and event id), and when to
/// stop.
final class Load: Sendable {
    private let state = Mutex<(acknowledged: [(seq: UInt64, id: Int)], stopped: Bool)>(([], false))

    func acknowledge(seq: UInt64, id: Int) { state.withLock { $0.acknowledged.append((seq, id)) } }
    func stop() { state.withLock { $0.stopped = true } }
    var stopped: Bool { state.withLock { $0.stopped } }
    var acknowledged: [(seq: UInt64, id: Int)] { state.withLock { $0.acknowledged } }
}
