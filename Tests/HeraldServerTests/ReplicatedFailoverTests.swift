import Foundation
import HeraldTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `Tools/cluster.sh`'s cluster (etcd, three PostgreSQL nodes under Patroni in strict
/// synchronous mode, HAProxy to the primary) losing its primary under load.
@Suite("cluster: PostgreSQL primary lost under load", .serverThreads)
struct ReplicatedFailoverTests {
    /// What the writers saw: the keys acknowledged and when each acknowledgement came; when
    /// they should stop; which node was killed, when.
    final class Acknowledgements: Sendable {
        private let state = Mutex<(keys: [Int], times: [Double])>(([], []))
        private let stopped = Atomic<Bool>(false)
        private let kill = Mutex<(node: String, at: Double)?>(nil)
        func add(_ key: Int, at time: Double) { state.withLock { $0.keys.append(key); $0.times.append(time) } }
        var keys: [Int] { state.withLock { $0.keys } }
        var times: [Double] { state.withLock { $0.times } }
        func stop() { stopped.store(true, ordering: .relaxed) }
        var isStopped: Bool { stopped.load(ordering: .relaxed) }
        func killed(_ node: String, at time: Double) { kill.withLock { $0 = (node, time) } }
        var killed: (node: String, at: Double)? { kill.withLock { $0 } }
    }

    /// Seconds since the reference date, as a plain number for gaps.
    static func now() -> Double { Date().timeIntervalSinceReferenceDate }

    /// The longest stretch without any acknowledgement that spans `moment`: how long writes
    /// stopped around it.
    static func outage(_ times: [Double], around moment: Double) -> Double {
        let sorted = times.sorted()
        let before = sorted.last { $0 <= moment } ?? moment
        let after = sorted.first { $0 > moment } ?? .infinity
        return after - before
    }

    /// One writer of the plain PostgreSQL load: psql runs of `batch` transactions, each
    /// `INSERT … ON CONFLICT DO NOTHING` then `COMMIT` then an `ack` line; a run that breaks
    /// (the primary lost) is followed by another from the first unacknowledged key (so a
    /// commit whose reply was lost is retried, and stays once), until `stop` is set.
    static func psqlWriter(
        _ cluster: PatroniCluster, writer: Int, batch: Int, acks: Acknowledgements
    ) throws {
        var next = writer * 1_000_000
        while !acks.isStopped {
            var script = ""
            for key in next..<(next + batch) {
                script += "BEGIN;\nINSERT INTO acks VALUES (\(key)) ON CONFLICT DO NOTHING;\nCOMMIT;\n\\echo ack \(key)\n"
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            process.arguments = [
                "-h", "127.0.0.1", "-p", "\(cluster.port("PG_PROXY_PORT"))", "-U", "postgres", "-d", "herald",
                "-X", "-q", "-v", "ON_ERROR_STOP=1",
            ]
            process.environment = ["PGPASSWORD": cluster.environment["SUPERUSER_PASSWORD"] ?? "", "PGCONNECT_TIMEOUT": "2"]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            try? input.fileHandleForWriting.write(contentsOf: Data(script.utf8))
            try? input.fileHandleForWriting.close()
            // Line by line, so that each acknowledgement is timed when it arrives.
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
            if process.terminationStatus != 0 { usleep(100_000) }
        }
    }

    @Test(
        "SIGKILL of the PostgreSQL primary under a psql load: every acknowledged commit is present once after Patroni's failover",
        .enabled(if: PatroniCluster.missing.isEmpty, "needs \(PatroniCluster.missing) (Tools/setup.sh installs them)"))
    func psqlLoadSurvivesFailover() async throws {
        let cluster = try PatroniCluster(partitions: 0)
        defer { cluster.stop() }
        _ = try cluster.psql("CREATE TABLE acks (key bigint PRIMARY KEY)")
        let acks = Acknowledgements()
        let writers = 4
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 1...writers {
                group.addTask { try Self.psqlWriter(cluster, writer: writer, batch: 50, acks: acks) }
            }
            group.addTask {
                defer { acks.stop() }
                // Load first, then the kill, then load again on the new primary.
                try await Self.waitFor(seconds: 60) { acks.keys.count >= 200 }
                let node = try cluster.killPrimaryPostgres()
                let at = Self.now()
                acks.killed(node, at: at)
                _ = try cluster.waitForPrimary(otherThan: node, seconds: 60)
                try await Self.waitFor(seconds: 60) { acks.times.filter { $0 > at }.count >= 200 }
            }
            try await group.waitForAll()
        }
        let kill = try #require(acks.killed)
        let acknowledged = acks.keys
        #expect(Set(acknowledged).count == acknowledged.count, "a key acknowledged twice")
        // Every acknowledged key is in the new primary's table, once (the primary key).
        let stored = Set(try cluster.psql("SELECT key FROM acks").split(separator: "\n").compactMap { Int($0) })
        let lost = Set(acknowledged).subtracting(stored)
        #expect(lost.isEmpty, "acknowledged but lost after the failover: \(lost.sorted().prefix(20))")
        #expect(cluster.primary() != kill.node)
        let outage = Self.outage(acks.times, around: kill.at)
        print("cluster failover (psql load): writes stopped for \(String(format: "%.1f", outage)) s around the SIGKILL of \(kill.node)")
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
}
