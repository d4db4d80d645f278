import AsyncHTTPClient
import Foundation
import HeraldEvents
import HeraldServer
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Accounts partitioned across two instances behind HAProxy, and one moved under load.
@Suite("serve: accounts across instances behind HAProxy", .serverThreads)
struct PartitionTests {
    static let haproxy = ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy", "/usr/bin/haproxy"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// HAProxy on a free loopback port, configured from `Tools/haproxy.cfg` with the two
    /// instances, its maps and socket in `directory`.
    final class Router: Sendable {
        let process: Process
        let port: Int
        let routing: HAProxyRouting

        init(directory: String, instances: [Int]) async throws {
            let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Tools/haproxy.cfg")
            port = try Self.freePort()
            var config = try String(contentsOf: tools, encoding: .utf8)
                .replacingOccurrences(of: "/etc/haproxy/", with: directory + "/")
                .replacingOccurrences(of: "/run/haproxy/", with: directory + "/")
                .replacingOccurrences(of: "127.0.0.1:8000", with: "127.0.0.1:\(port)")
                .replacingOccurrences(of: "10.0.0.1:8080", with: "127.0.0.1:\(instances[0])")
                .replacingOccurrences(of: "10.0.0.2:8080", with: "127.0.0.1:\(instances[1])")
                .replacingOccurrences(of: "    log stderr format short local0\n", with: "")
            config = config.replacingOccurrences(of: " check\n", with: "\n")
            for map in ["herald-accounts.map", "herald-pushkeys.map", "herald-subscriptions.map"] {
                _ = FileManager.default.createFile(atPath: directory + "/" + map, contents: Data())
            }
            try Data(config.utf8).write(to: URL(fileURLWithPath: directory + "/haproxy.cfg"))
            routing = HAProxyRouting(socketPath: directory + "/herald.sock", mapPath: directory + "/herald-accounts.map")
            process = Process()
            process.executableURL = URL(fileURLWithPath: PartitionTests.haproxy!)
            process.arguments = ["-f", directory + "/haproxy.cfg", "-db"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Ready once it answers (healthz has no account: any instance).
            for _ in 0..<200 {
                if (try? await Self.get("http://127.0.0.1:\(port)/healthz")) == 200 { return }
                try await Task.sleep(for: .milliseconds(25))
            }
            process.terminate()
            throw CancellationError()
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }

        /// A test that failed before ``stop()`` leaves no HAProxy running after it.
        deinit {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }

        static func get(_ url: String) async throws -> Int {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
            _ = try await response.body.collect(upTo: 1 << 20)
            return Int(response.status.code)
        }

        /// A port nothing listens on now (bound to 0, read back, closed).
        static func freePort() throws -> Int {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
                }
            }
            guard bound else { throw CancellationError() }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }

    /// POSTs one event through the router until it is acknowledged (retrying 503s, as a
    /// client of a moving account must); returns false when it never was.
    static func post(_ port: Int, account: String, id: Int) async throws -> Bool {
        // A fence lasts tens of milliseconds; on a busy machine, allow it seconds.
        for _ in 0..<4_000 {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/events")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(LiveServer.adminToken)")
            request.headers.add(name: "X-Herald-Account", value: account)
            request.headers.add(name: "Idempotency-Key", value: "\(account)-\(id)")
            request.body = .bytes(ByteBuffer(string: notifyLine(account: account, chat: "user:\(id % 3)", id: id, body: "event \(id)")))
            let response = try await HTTPClient.shared.execute(request, timeout: LiveServer.requestTimeout)
            _ = try await response.body.collect(upTo: 1 << 20)
            if response.status == .ok { return true }
            guard response.status == .serviceUnavailable || response.status == .conflict else { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// The event ids of `account` stored on `server`, in seq order.
    static func ids(_ server: LiveServer, account: String) async throws -> [Int] {
        let body = try await server.request(.GET, "/v1/admin/accounts/\(account)/export").body
        return body.split(separator: "\n").compactMap { object(String($0))["id"] as? Int }
    }

    @Test(
        "two instances behind HAProxy: an account moved under concurrent ingest keeps every acknowledged event once, and its state",
        .enabled(if: PartitionTests.haproxy != nil, "haproxy is not installed (apt-get install haproxy; .ci/run installs it)"))
    func moveUnderLoad() async throws {
        let directory = TemporaryDirectory("serve-partition")
        let servers = [
            try await LiveServer(path: directory.path + "/a"), try await LiveServer(path: directory.path + "/b"),
        ]
        let router = try await Router(directory: directory.path, instances: servers.map(\.port))
        defer { router.stop() }
        let accounts = (1...6).map { "tg:\($0)" }
        var next = 0
        for account in accounts {
            next += 1
            #expect(try await Self.post(router.port, account: account, id: next))
        }
        // Where the hash put each account: exactly one instance holds it.
        var home: [String: Int] = [:]
        for account in accounts {
            let holders = try await (0..<2).asyncFilter { try await servers[$0].request(.GET, "/v1/accounts/\(account)/state").status == 200 }
            #expect(holders.count == 1, "\(account) on \(holders)")
            home[account] = holders.first
        }
        #expect(Set(home.values).count == 2, "the hash used one instance only: \(home)")
        let moved = accounts[0]
        let from = home[moved]!, to = 1 - from

        let pushkey = #"{"pushkey":"PK-moved","account":"\#(moved)"}"#
        #expect(try await servers[from].request(.POST, "/v1/admin/pushkeys", body: pushkey).status < 300)

        // Load: four clients post to every account, the moved one most, until told to stop.
        let tally = Tally(next: next)
        let routerPort = router.port
        let load = Task(executorPreference: ThreadExecutor.servers) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var turn = 0
                        while !tally.stop.load(ordering: .relaxed) {
                            turn += 1
                            let account = turn % 2 == 0 ? moved : accounts[(worker + turn) % accounts.count]
                            let id = tally.counter.add(1, ordering: .relaxed).newValue
                            if try await Self.post(routerPort, account: account, id: id) {
                                tally.acknowledged.withLock { $0[account, default: []].append(id) }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        var move = AccountMove(
            account: moved, source: servers[from].base, sourceToken: LiveServer.adminToken,
            target: servers[to].base, targetToken: LiveServer.adminToken)
        move.routing = router.routing
        move.targetBackend = to == 0 ? "herald-a" : "herald-b"
        move.chunk = 200
        let report = try await move.run()
        let movedBefore = tally.acknowledged.withLock { $0[moved]?.count ?? 0 }
        // Load goes on after the cut-over, now to the target.
        // (Bounded: if the load stopped, say so instead of waiting for ever.)
        var waits = 0
        while tally.acknowledged.withLock({ $0[moved]?.count ?? 0 }) < movedBefore + 30, waits < 3_000 {
            try await Task.sleep(for: .milliseconds(20))
            waits += 1
        }
        #expect(tally.acknowledged.withLock { $0[moved]?.count ?? 0 } >= movedBefore + 30, "the load stopped after the move")
        tally.stop.store(true, ordering: .relaxed)
        try await load.value

        let acked = tally.acknowledged.withLock { $0 }
        #expect(report.eventsCopied > 0 && report.purged == report.eventsCopied, "\(report)")
        // The moved account: every acknowledged event once, on the target only, in the order
        // each client saw them acknowledged.
        let onTarget = try await Self.ids(servers[to], account: moved)
        let expected = [1] + (acked[moved] ?? [])
        #expect(onTarget.count == Set(onTarget).count, "duplicates on the target")
        #expect(Set(onTarget) == Set(expected), "lost: \(Set(expected).subtracting(onTarget)), extra: \(Set(onTarget).subtracting(expected))")
        #expect(try await Self.ids(servers[from], account: moved).isEmpty)
        // Its pushkey moved with it (and so into the target's HAProxy map).
        #expect(report.pushkeys == 1)
        let routesTo = try await servers[to].request(.GET, "/v1/admin/routes?map=pushkeys")
        #expect(routesTo.body == "PK-moved \(moved)\n", "\(routesTo)")
        #expect(try await servers[from].request(.GET, "/v1/admin/routes?map=pushkeys").body == "")
        #expect(try await servers[from].request(.GET, "/v1/accounts/\(moved)/state").status == 404)
        // A straggler sent to the source directly is refused, not stored there.
        let straggler = try await servers[from].request(.POST, "/v1/events", body: notifyLine(account: moved, id: 999_999))
        #expect(straggler.status == 503)
        // The other accounts: every acknowledged event once, where the hash put them.
        for account in accounts.dropFirst() {
            let stored = try await Self.ids(servers[home[account]!], account: account)
            let sent = accounts.firstIndex(of: account)! + 1
            #expect(stored.sorted() == ([sent] + (acked[account] ?? [])).sorted(), "\(account)")
        }
        // The target's state of the moved account is a replay of its events: the same
        // events posted in the target's order to a fresh instance give the same state.
        let fresh = try await LiveServer(path: directory.path + "/c")
        let lines = try await servers[to].request(.GET, "/v1/admin/accounts/\(moved)/export").body
        #expect(try await fresh.request(.POST, "/v1/admin/accounts/\(moved)/import", body: lines).status == 200)
        let replayed = try await fresh.request(.GET, "/v1/accounts/\(moved)/state").body
        let served = try await servers[to].request(.GET, "/v1/accounts/\(moved)/state").body
        #expect(AccountMove.withoutSeqs(try JSONParser.parse(Array(replayed.utf8))) == AccountMove.withoutSeqs(try JSONParser.parse(Array(served.utf8))))
        await fresh.stop()
        for server in servers { await server.stop() }
    }
}

/// What the load's clients share: the events acknowledged per account, the next id, the stop flag.
final class Tally: Sendable {
    let acknowledged = Mutex<[String: [Int]]>([:])
    let counter: Atomic<Int>
    let stop = Atomic<Bool>(false)

    init(next: Int) { counter = Atomic(next) }
}

extension Sequence {
    func asyncFilter(_ isIncluded: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await isIncluded(element) { kept.append(element) }
        return kept
    }
}

/// `herald move-account` as a user runs it.
@Suite("serve: herald move-account", .serverThreads)
struct MoveAccountCommandTests {
    @Test("--dry-run counts and changes nothing; --yes moves the events and purges the source; non-interactive without --yes refuses")
    func moveAccountCLI() async throws {
        let directory = TemporaryDirectory("serve-move")
        let source = try await LiveServer(path: directory.path + "/a")
        let target = try await LiveServer(path: directory.path + "/b")
        let body = (1...10).map { notifyLine(account: "tg:9", id: $0) }.joined(separator: "\n")
        #expect(try await source.request(.POST, "/v1/events", body: body).status == 200)
        let (key, keyId, _) = try TelegramKeyTests.vector()
        #expect(try await source.request(.POST, "/v1/admin/keys", body: #"{"key":"\#(key)","account":"tg:9"}"#).status == 201)
        #expect(try await source.request(.POST, "/v1/admin/pushkeys", body: #"{"pushkey":"pk-9","account":"tg:9"}"#).status == 201)
        let command = "HERALD_ADMIN_TOKEN=\(LiveServer.adminToken) \(quoted(HeraldBinary.path)) move-account --account tg:9 "
            + "--from \(source.base) --to \(target.base)"

        let dry = try shell(command + " --dry-run")
        #expect(dry.status == 0 && dry.stdout.contains("10 events, 1 pushkeys"), "\(dry)")
        #expect(try await PartitionTests.ids(source, account: "tg:9").count == 10)
        let unconfirmed = try shell(command)
        #expect(unconfirmed.status != 0 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed)")
        #expect(try await target.request(.GET, "/v1/accounts/tg:9/state").status == 404)

        let moved = try shell(command + " --yes")
        #expect(moved.status == 0, "\(moved)")
        #expect(moved.stdout.contains("moved tg:9: 10 events") && moved.stdout.contains("1 pushkeys"), "\(moved)")
        #expect(try await PartitionTests.ids(target, account: "tg:9") == Array(1...10))
        #expect(try await PartitionTests.ids(source, account: "tg:9").isEmpty)
        // The account's Telegram key moved with it: on the target, bound to it; gone from the source.
        let targetKeys = try #require(object(try await target.request(.GET, "/v1/admin/keys").body)["keys"] as? [[String: Any]])
        #expect(targetKeys.count == 1 && targetKeys.first?["id"] as? Int64 == keyId && targetKeys.first?["account"] as? String == "tg:9")
        #expect((object(try await source.request(.GET, "/v1/admin/keys").body)["keys"] as? [[String: Any]])?.isEmpty == true)
        await source.stop()
        await target.stop()
    }
}
