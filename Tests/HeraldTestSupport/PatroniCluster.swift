import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `Tools/cluster.sh` in a temporary directory: etcd, three PostgreSQL 15 nodes under Patroni
/// (synchronous mode, strict), HAProxy routing to the primary, and `partitions` Herald
/// partitions behind HAProxy, every one on free loopback ports. ``stop()`` (also run when the
/// value dies, so a failing test leaves nothing running) is `cluster.sh down`, which stops
/// exactly the processes `up` recorded; the directory is removed then.
public final class PatroniCluster: @unchecked Sendable {
    /// The repository's `Tools/cluster.sh`.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/cluster.sh").path

    /// What the cluster needs, missing here (empty when it can run): the Debian packages
    /// `Tools/setup.sh` installs, and root (PostgreSQL runs as the postgres user).
    public static var missing: [String] {
        var missing: [String] = []
        for (path, package) in [
            ("/usr/bin/etcd", "etcd-server"), ("/usr/bin/patroni", "patroni"),
            ("/usr/lib/postgresql/15/bin/postgres", "postgresql-15"), ("/usr/sbin/haproxy", "haproxy"),
            ("/usr/bin/psql", "postgresql-client-15"), ("/usr/bin/curl", "curl"),
        ] where !FileManager.default.isExecutableFile(atPath: path) {
            missing.append(package)
        }
        if getuid() != 0 { missing.append("root") }
        return missing
    }

    public let directory: String
    /// `cluster.env`: the ports (`PG_PROXY_PORT`, `HTTP_PROXY_PORT`, `PG1_PORT`, `REST1_PORT`,
    /// `P1_PORT` …), `POSTGRES_URL`, `HERALD_ADMIN_TOKEN` and the passwords.
    public let environment: [String: String]
    private let lock = NSLock()
    private var running = true

    /// Runs `cluster.sh up` with `partitions` Herald partitions (0: PostgreSQL only) served by
    /// `herald`; throws with the script's output when it fails, after stopping what it started.
    public init(partitions: Int = 0, herald: String? = nil) throws {
        directory = NSTemporaryDirectory() + "herald-cluster-\(UUID().uuidString)"
        HangWatchdog.shared.begin(directory, at: "PatroniCluster")
        var variables = ["HERALD_CLUSTER_DIR": directory, "HERALD_CLUSTER_PARTITIONS": "\(partitions)"]
        if let herald { variables["HERALD_BIN"] = herald }
        let up = Self.script(["up"], variables)
        guard up.status == 0 else {
            _ = Self.script(["down"], ["HERALD_CLUSTER_DIR": directory, "HERALD_CLUSTER_STOP_SECONDS": "5"])
            let logs = Self.tails(directory)
            try? FileManager.default.removeItem(atPath: directory)
            HangWatchdog.shared.end(directory)
            throw Failure(message: "cluster.sh up failed (\(up.status)): \(up.output)\n\(logs)")
        }
        let text = (try? String(contentsOfFile: directory + "/cluster.env", encoding: .utf8)) ?? ""
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.environment = environment
    }

    deinit { stop() }

    /// `cluster.sh down`, then the directory is removed; once.
    public func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        // A Patroni still busy with the failover's rewind ignores SIGTERM for long: after 5 s
        // it is killed, and its postmaster stopped by pg_ctl.
        _ = Self.script(["down"], ["HERALD_CLUSTER_DIR": directory, "HERALD_CLUSTER_STOP_SECONDS": "5"])
        try? FileManager.default.removeItem(atPath: directory)
        HangWatchdog.shared.end(directory)
    }

    /// `cluster.sh status`: its exit status and what it printed.
    public func status() -> (status: Int32, output: String) {
        Self.script(["status"], ["HERALD_CLUSTER_DIR": directory])
    }

    /// The port named `key` in `cluster.env` (`PG_PROXY_PORT`, `HTTP_PROXY_PORT`, …).
    public func port(_ key: String) -> Int { Int(environment[key] ?? "") ?? 0 }

    /// The node (`pg1`…`pg3`) whose Patroni answers `GET /primary` with 200, if one does.
    public func primary() -> String? {
        (1...3).first { Self.httpStatus(port: port("REST\($0)_PORT"), path: "/primary") == 200 }.map { "pg\($0)" }
    }

    /// The postmaster's pid of `node`, from its `postmaster.pid`, when it runs.
    public func postmaster(_ node: String) -> pid_t? {
        guard let text = try? String(contentsOfFile: "\(directory)/\(node)/data/postmaster.pid", encoding: .utf8),
            let pid = text.split(separator: "\n").first.flatMap({ pid_t($0) }), kill(pid, 0) == 0
        else { return nil }
        return pid
    }

    /// SIGKILL to the primary's postmaster (PostgreSQL only; its Patroni sees the crash and,
    /// with `primary_start_timeout: 0`, hands the leader key to the synchronous standby).
    /// Returns the node killed.
    public func killPrimaryPostgres() throws -> String {
        guard let node = primary(), let pid = postmaster(node) else { throw Failure(message: "no primary to kill") }
        kill(pid, SIGKILL)
        return node
    }

    /// Waits up to `seconds` for a primary other than `node`; returns it.
    public func waitForPrimary(otherThan node: String, seconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let primary = primary(), primary != node { return primary }
            usleep(100_000)
        }
        throw Failure(message: "no new primary within \(seconds) s\n\(status().output)")
    }

    /// Runs `sql` with psql through HAProxy as the superuser, in database `database`; returns
    /// its unaligned, tuples-only output, or throws with psql's message.
    public func psql(_ sql: String, database: String = "herald") throws -> String {
        let result = Self.capture(
            "/usr/bin/psql",
            ["-h", "127.0.0.1", "-p", "\(port("PG_PROXY_PORT"))", "-U", "postgres", "-d", database, "-X", "-q", "-At",
             "-v", "ON_ERROR_STOP=1", "-c", sql],
            ["PGPASSWORD": environment["SUPERUSER_PASSWORD"] ?? "", "PGCONNECT_TIMEOUT": "5"])
        guard result.status == 0 else { throw Failure(message: "psql: \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An error of the cluster, with what the script or the servers said.
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }

    /// The last lines of every log of the cluster, for a failure's message.
    private static func tails(_ directory: String) -> String {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/log")) ?? []
        return logs.sorted().map { name in
            let text = (try? String(contentsOfFile: directory + "/log/" + name, encoding: .utf8)) ?? ""
            return "== \(name)\n" + text.split(separator: "\n").suffix(15).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    private static func script(_ arguments: [String], _ variables: [String: String]) -> (status: Int32, output: String) {
        capture("/bin/bash", [script] + arguments, variables)
    }

    /// Runs a program with `variables` added to the environment; its status and output
    /// (standard output and error together).
    static func capture(_ executable: String, _ arguments: [String], _ variables: [String: String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(executable): \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The status of `GET path` on a loopback port (0 when nothing answers within a second).
    static func httpStatus(port: Int, path: String) -> Int {
        let result = capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "1", "http://127.0.0.1:\(port)\(path)"], [:])
        return Int(result.output) ?? 0
    }
}
