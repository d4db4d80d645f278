import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL 15 primary and, optionally, one synchronous standby (Debian's
/// `postgresql-15`), on free loopback ports in a temporary directory, for the replicated-log
/// tests. Run as root, the servers run as the `postgres` user (`initdb` and `postgres` refuse
/// root), started with `setpriv`, which execs, so each process this starts is the postmaster
/// itself (as another user, they run as that user); ``stop()`` (also called when the value dies, so a failing test leaves nothing
/// running) kills exactly those and removes the directory.
///
/// The database `herald` belongs to the role `herald`, password ``password``, over TCP with
/// SCRAM; the `postgres` role connects without a password (replication, the test's SQL).
public final class PostgresServers: @unchecked Sendable {
    public static let binaries = "/usr/lib/postgresql/15/bin"
    public static let password = "herald-secret"

    /// Whether PostgreSQL 15 is installed (`Tools/setup.sh` installs it).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binaries + "/postgres") }

    public let directory: String
    public let primaryPort: Int
    public let standbyPort: Int
    private let lock = NSLock()
    private var processes: [String: Process] = [:]

    /// Starts a primary and, when `standby`, a synchronous standby streaming from it.
    public init(standby: Bool = true) throws {
        directory = NSTemporaryDirectory() + "herald-pg-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        primaryPort = try freePort()
        standbyPort = try freePort()
        do {
            if getuid() == 0 { try Self.check(Self.run("/bin/chown", ["postgres:postgres", directory]), "chown") }
            try Self.runAsPostgres("initdb", ["-N", "-D", directory + "/primary", "-U", "postgres", "--auth-local=trust", "-E", "UTF8", "--locale=C"])
            try """
                local all all trust
                host replication all 127.0.0.1/32 trust
                host all postgres 127.0.0.1/32 trust
                host all all 127.0.0.1/32 scram-sha-256

                """.write(toFile: directory + "/primary/pg_hba.conf", atomically: false, encoding: .utf8)
            try append(
                """
                listen_addresses = '127.0.0.1'
                unix_socket_directories = '\(directory)'
                wal_level = replica
                max_wal_senders = 5
                fsync = off
                full_page_writes = off
                shared_buffers = 16MB
                log_min_messages = warning

                """, to: directory + "/primary/postgresql.conf")
            try start("primary", port: primaryPort)
            try psql(port: primaryPort, database: "postgres", "CREATE ROLE herald LOGIN PASSWORD '\(Self.password)'")
            // Before naming the standby synchronous: CREATE DATABASE would wait for it for ever.
            try psql(port: primaryPort, database: "postgres", "CREATE DATABASE herald OWNER herald")
            if standby {
                try Self.runAsPostgres(
                    "pg_basebackup", ["-h", "127.0.0.1", "-p", "\(primaryPort)", "-U", "postgres", "-D", directory + "/standby", "-c", "fast", "-R"])
                try append("primary_conninfo = 'host=127.0.0.1 port=\(primaryPort) user=postgres application_name=standby'\n", to: directory + "/standby/postgresql.auto.conf")
                try start("standby", port: standbyPort)
                try psql(port: primaryPort, "ALTER SYSTEM SET synchronous_standby_names = 'standby'")
                try psql(port: primaryPort, "SELECT pg_reload_conf()")
                try waitUntil("the standby is synchronous") {
                    (try? self.psql(port: self.primaryPort, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")) == "1"
                }
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// `postgres://herald:PASSWORD@127.0.0.1:PORT/herald` (the primary's port by default).
    public func url(port: Int? = nil, password: String = PostgresServers.password) -> String {
        "postgres://herald:\(password)@127.0.0.1:\(port ?? primaryPort)/herald"
    }

    /// Runs `sql` as `postgres` in `database` on `port`; returns psql's output,
    /// unaligned, without headers, trimmed.
    @discardableResult
    public func psql(port: Int? = nil, database: String = "herald", _ sql: String) throws -> String {
        let (executable, arguments) = Self.postgresCommand(
            "/usr/bin/psql",
            ["-h", directory, "-p", "\(port ?? primaryPort)", "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-XAtq", "-c", sql])
        let result = try Self.run(executable, arguments)
        try Self.check(result, "psql \(sql)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Sends `signal` to a server this started (`primary` or `standby`) and, for SIGKILL and
    /// SIGQUIT, waits for it to exit.
    public func signal(_ name: String, _ signal: Int32) {
        guard let process = lock.withLock({ processes[name] }) else { return }
        kill(process.processIdentifier, signal)
        if signal == SIGKILL || signal == SIGQUIT || signal == SIGTERM {
            process.waitUntilExit()
            lock.withLock { _ = processes.removeValue(forKey: name) }
        }
    }

    /// Starts the standby again after it was stopped.
    public func restartStandby() throws {
        try start("standby", port: standbyPort)
    }

    /// Promotes the standby to a primary (after the primary was killed).
    public func promoteStandby() throws {
        try psql(port: standbyPort, "SELECT pg_promote(true, 30)")
    }

    /// Kills every server this started (SIGQUIT: PostgreSQL's immediate shutdown, then
    /// SIGKILL if it lingers) and removes the directory.
    public func stop() {
        let started = lock.withLock { () -> [Process] in
            defer { processes = [:] }
            return Array(processes.values)
        }
        for process in started where process.isRunning {
            kill(process.processIdentifier, SIGQUIT)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func start(_ name: String, port: Int) throws {
        let process = Process()
        let (executable, arguments) = Self.postgresCommand(Self.binaries + "/postgres", ["-D", directory + "/" + name, "-p", "\(port)"])
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let log = FileHandle(forWritingAtPath: directory + "/\(name).log") ?? {
            FileManager.default.createFile(atPath: directory + "/\(name).log", contents: nil)
            return FileHandle(forWritingAtPath: directory + "/\(name).log")!
        }()
        process.standardError = log
        try process.run()
        lock.withLock { processes[name] = process }
        try waitUntil("\(name) accepts connections on port \(port)") {
            guard process.isRunning else { return true }
            return (try? self.psql(port: port, database: "postgres", "SELECT 1")) == "1"
        }
        guard process.isRunning else {
            let text = (try? String(contentsOfFile: directory + "/\(name).log", encoding: .utf8)) ?? ""
            throw PostgresFailure("\(name) exited at start: \(text.suffix(2000))")
        }
    }

    private func waitUntil(_ what: String, timeout: TimeInterval = 30, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw PostgresFailure("timed out waiting until \(what)") }
            usleep(50_000)
        }
    }

    private func append(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw PostgresFailure("cannot open \(path)") }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    private static func runAsPostgres(_ tool: String, _ arguments: [String]) throws {
        let (executable, all) = postgresCommand(binaries + "/" + tool, arguments)
        try check(run(executable, all), tool)
    }

    /// `executable` with `arguments` as the `postgres` user when this runs as root (through
    /// `setpriv`, which execs), else as they are.
    private static func postgresCommand(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard getuid() == 0 else { return (executable, arguments) }
        return ("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--clear-groups", "--", executable] + arguments)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try HeraldTestSupport.run(executable, arguments)
    }

    private static func check(_ result: (status: Int32, output: String), _ what: String) throws {
        guard result.status == 0 else { throw PostgresFailure("\(what) exited \(result.status): \(result.output)") }
    }
}

/// A failure to start or drive the test's PostgreSQL servers.
public struct PostgresFailure: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
public func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw PostgresFailure("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw PostgresFailure("bind: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw PostgresFailure("getsockname: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
