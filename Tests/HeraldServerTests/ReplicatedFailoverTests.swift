import AsyncHTTPClient
import Foundation
import HeraldTestSupport
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `Tools/cluster.sh`'s cluster (etcd, three PostgreSQL nodes under Patroni in strict
/// synchronous mode, HAProxy to the primary, a Herald partition on the replicated log behind
/// HAProxy) losing its PostgreSQL primary under load.
@Suite("cluster: PostgreSQL primary lost under load", .serverThreads)
struct ReplicatedFailoverTests {
    /// What one load saw: the keys acknowledged and when each acknowledgement came, the times
    /// of the 503s; whether to stop.
    final class Acknowledgements: Sendable {
        private let state = Mutex<(keys: [Int], times: [Double], refusals: [Double])>(([], [], []))
        private let stopped = Atomic<Bool>(false)
        func add(_ key: Int, at time: Double) { state.withLock { $0.keys.append(key); $0.times.append(time) } }
        func refused(at time: Double) { state.withLock { $0.refusals.append(time) } }
        var keys: [Int] { state.withLock { $0.keys } }
        var times: [Double] { state.withLock { $0.times } }
        var refusals: [Double] { state.withLock { $0.refusals } }
        func stop() { stopped.store(true, ordering: .relaxed) }
        var isStopped: Bool { stopped.load(ordering: .relaxed) }
        /// Acknowledgements after `time`.
        func count(after time: Double) -> Int { state.withLock { $0.times.count { $0 > time } } }
    }

    /// Seconds since the reference date, as a plain number for gaps.
    static func now() -> Double { Date().timeIntervalSinceReferenceDate }

    /// How long after `moment` writes resumed: the first acknowledgement after the last
    /// refusal that followed it (or after `moment`, when none was refused).
    static func outage(_ acks: Acknowledgements, after moment: Double) -> Double {
        let lastRefusal = acks.refusals.filter { $0 > moment }.max() ?? moment
        return (acks.times.filter { $0 > lastRefusal }.min() ?? .infinity) - moment
    }

    /// One writer of the plain PostgreSQL load: psql runs of `batch` transactions, each
    /// `INSERT … ON CONFLICT DO NOTHING` then `COMMIT` then an `ack` line; a run that breaks
    /// (the primary lost) is followed by another from the first unacknowledged key (so a
    /// commit whose reply was lost is retried, and stays once), until stopped.
    static func psqlWriter(_ cluster: PatroniCluster, writer: Int, batch: Int, acks: Acknowledgements) throws {
        var next = writer * 1_000_000
        while !acks.isStopped {
            var script = ""
            for key in next..<(next + batch) {
                script += "BEGIN;\nINSERT INTO acks VALUES (\(key)) ON CONFLICT DO NOTHING;\nCOMMIT;\n\\echo ack \(key)\n"
            }
            let process = Process()
            // Line-buffered, so that each acknowledgement is read (and timed) when psql prints it.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
            process.arguments = [
                "-oL", "/usr/bin/psql", "-h", "127.0.0.1", "-p", "\(cluster.port("PG_PROXY_PORT"))", "-U", "postgres",
                "-d", "herald", "-X", "-q", "-v", "ON_ERROR_STOP=1",
            ]
            process.environment = ["PGPASSWORD": cluster.environment["SUPERUSER_PASSWORD"] ?? "", "PGCONNECT_TIMEOUT": "2"]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            try? input.fileHandleForWriting.write(contentsOf: Data(script.utf8))
            try? input.fileHandleForWriting.close()
            var pending = Data()
            while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    if line.hasPrefix("ack "), let key = Int(line.dropFirst(4)) {
                        acks.add(key, at: now())
                        next = key + 1
                    }
                }
            }
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                acks.refused(at: now())
                usleep(100_000)
            }
        }
    }

    /// One client of Herald through HAProxy: events of account `tg:writer`, one per request,
    /// each retried with its `Idempotency-Key` on a 503, 504, 409 (or a broken connection)
    /// until acknowledged; returns on another status, recording it.
    static func heraldWriter(_ cluster: PatroniCluster, writer: Int, acks: Acknowledgements) async throws {
        let account = "tg:\(writer)"
        var id = writer * 1_000_000
        while !acks.isStopped {
            id += 1
            while true {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(cluster.port("HTTP_PROXY_PORT"))/v1/events")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(cluster.environment["HERALD_ADMIN_TOKEN"] ?? "")")
                request.headers.add(name: "X-Herald-Account", value: account)
                request.headers.add(name: "Idempotency-Key", value: "\(account)-\(id)")
                request.body = .bytes(ByteBuffer(string: notifyLine(account: account, chat: "user:\(id % 5)", id: id)))
                let status: UInt
                do {
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    status = response.status.code
                } catch {
                    status = 0
                }
                if status == 200 {
                    acks.add(id, at: now())
                    break
                }
                // 503: refused while the log is unavailable; 0: a broken connection; 504: HAProxy
                // gave up waiting (a commit waiting for a standby, on a loaded machine); 409: the
                // same key's first try is still in flight. Each is retried with the same
                // Idempotency-Key, as a client should: the event must still be stored once.
                guard [503, 0, 504, 409].contains(status) else {
                    Issue.record("POST /v1/events answered \(status)")
                    return
                }
                acks.refused(at: now())
                // A client would honour Retry-After (1 s); a shorter wait measures the outage finer.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    @Test(
        "SIGKILL of the PostgreSQL primary under load: Herald's writes resume after Patroni's failover, every acknowledged event once, seqs gapless",
        .enabled(if: PatroniCluster.missing.isEmpty, "needs \(PatroniCluster.missing) (Tools/setup.sh installs them)"))
    func primaryKilledUnderLoad() async throws {
        let started = Self.now()
        let cluster = try PatroniCluster(partitions: 1, herald: HeraldBinary.path)
        let up = Self.now() - started
        defer { cluster.stop() }
        _ = try cluster.psql("CREATE TABLE acks (key bigint PRIMARY KEY)")
        let psql = Acknowledgements(), herald = Acknowledgements()
        let killed = Mutex<(node: String, at: Double)?>(nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 1...2 {
                group.addTask { try Self.psqlWriter(cluster, writer: writer, batch: 50, acks: psql) }
            }
            for writer in 1...6 {
                group.addTask { try await Self.heraldWriter(cluster, writer: writer, acks: herald) }
            }
            // Load first, then the kill, then load again on the new primary.
            defer { psql.stop(); herald.stop() }
            try await Self.waitFor(seconds: 60) { herald.keys.count >= 30 && psql.keys.count >= 50 }
            let node = try cluster.killPrimaryPostgres()
            let at = Self.now()
            killed.withLock { $0 = (node, at) }
            _ = try cluster.waitForPrimary(otherThan: node, seconds: 60)
            try await Self.waitFor(seconds: 60) { herald.count(after: at) >= 30 && psql.count(after: at) >= 50 }
            psql.stop()
            herald.stop()
            try await group.waitForAll()
        }
        let kill = try #require(killed.withLock { $0 })
        #expect(cluster.primary() != kill.node)

        // PostgreSQL directly: every acknowledged psql key is in the new primary's table.
        let stored = Set(try cluster.psql("SELECT key FROM acks").split(separator: "\n").compactMap { Int($0) })
        let lostRows = Set(psql.keys).subtracting(stored)
        #expect(lostRows.isEmpty, "commits acknowledged to psql, lost: \(lostRows.sorted().prefix(20))")

        // Herald: each acknowledged event once in the partition's log, seqs gapless from 1.
        let partition = cluster.port("P1_PORT")
        var seqs: [Int] = []
        var ids: [Int] = []
        for writer in 1...6 {
            let (status, body) = try await Self.get(partition, "/v1/admin/accounts/tg:\(writer)/export", token: cluster.environment["HERALD_ADMIN_TOKEN"] ?? "")
            #expect(status == 200)
            for line in body.split(separator: "\n") {
                let event = object(String(line))
                if let seq = event["seq"] as? Int { seqs.append(seq) }
                if let id = event["id"] as? Int { ids.append(id) }
            }
        }
        #expect(Set(ids).count == ids.count, "an event stored twice")
        let lostEvents = Set(herald.keys).subtracting(ids)
        #expect(lostEvents.isEmpty, "events acknowledged by Herald, lost: \(lostEvents.sorted().prefix(20))")
        #expect(seqs.sorted() == Array(1...max(seqs.count, 1)), "Herald's seqs are not 1…\(seqs.count) once each")
        // The replicated log in PostgreSQL: the same seqs, gapless.
        let logged = try cluster.psql("SELECT seq FROM herald_records WHERE log_id = 'p1' ORDER BY seq")
            .split(separator: "\n").compactMap { Int($0) }
        #expect(logged == seqs.sorted(), "PostgreSQL holds seqs \(logged.first ?? 0)…\(logged.last ?? 0) (\(logged.count)), Herald \(seqs.count)")

        let refusals = herald.refusals.filter { $0 > kill.at }
        let outage = Self.outage(herald, after: kill.at)
        let format = { (seconds: Double) in String(format: "%.1f s", seconds) }
        print(
            "cluster up in \(format(up)); after SIGKILL of \(kill.node)'s PostgreSQL, Herald's writes resumed after "
                + "\(format(outage)) (\(refusals.count) answers 503 or a broken connection, over "
                + "\(format((refusals.max() ?? kill.at) - (refusals.min() ?? kill.at)))), psql's after \(format(Self.outage(psql, after: kill.at))); "
                + "acknowledged: \(herald.keys.count) events, \(psql.keys.count) rows; test \(format(Self.now() - started))")
        #expect(outage < 60)
    }

    /// Polls `condition` every 50 ms for up to `seconds`; throws when it never holds.
    static func waitFor(seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = now() + seconds
        while !condition() {
            guard now() < deadline else { throw PatroniCluster.Failure(message: "timed out after \(seconds) s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `GET path` on a loopback port with a bearer token: the status and the body.
    static func get(_ port: Int, _ path: String, token: String) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), String(buffer: body))
    }
}
