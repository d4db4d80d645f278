import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One PostgreSQL connection used from blocking threads (the commit thread, the replication
/// thread, the CLI), never from an event loop: each call waits for its future.
///
/// It records the notices the server sends (postgres-nio hands them to nobody: it only logs
/// each backend message at trace level, which ``NoticeRecorder`` reads). A commit whose wait
/// for the synchronous standby was cancelled returns success with such a WARNING, and must
/// not be acknowledged.
final class PostgresLink: Sendable {
    let connection: PostgresConnection
    let address: LogAddress
    private let notices: NoticeRecorder
    private let quiet = Logger(label: "herald.replication.query", factory: { _ in SwiftLogNoOpLogHandler() })

    private init(connection: PostgresConnection, address: LogAddress, notices: NoticeRecorder) {
        self.connection = connection
        self.address = address
        self.notices = notices
    }

    /// Connects to `address`; throws a ``ReplicationError`` naming the address (never the
    /// password): unreachable, refused credentials or database.
    /// Without `recordingNotices` (a connection that only reads), backend messages are not
    /// logged at all.
    static func connect(_ address: LogAddress, recordingNotices: Bool = true) throws(ReplicationError) -> PostgresLink {
        let notices = NoticeRecorder()
        var logger = Logger(
            label: "herald.replication.connection",
            factory: { _ -> any LogHandler in
                if recordingNotices { return NoticeHandler(recorder: notices) }
                return SwiftLogNoOpLogHandler()
            })
        logger.logLevel = recordingNotices ? .trace : .critical
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: address.configuration,
                id: 1, logger: logger
            ).wait()
            return PostgresLink(connection: connection, address: address, notices: notices)
        } catch {
            throw Self.connectError(error, address: address)
        }
    }

    private static func connectError(_ error: any Error, address: LogAddress) -> ReplicationError {
        if let error = error as? PSQLError, let info = error.serverInfo {
            let state = info[.sqlState] ?? ""
            let message = info[.message] ?? "refused"
            if state.hasPrefix("28") || state == "3D000" {
                return ReplicationError(.authentication, "PostgreSQL at \(address) refused the connection: \(message) (SQLSTATE \(state))")
            }
            return ReplicationError(.unreachable, "PostgreSQL at \(address) refused the connection: \(message) (SQLSTATE \(state))")
        }
        return ReplicationError(.unreachable, "cannot connect to PostgreSQL at \(address): \(Self.reason(error))")
    }

    /// What went wrong, without the query's binds (record bytes) or the password.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                return "\(info[.message] ?? "error") (SQLSTATE \(info[.sqlState] ?? "?"))"
            }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The SQLSTATE of a server error, if `error` is one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Runs `query` and returns its rows, with the notices the server sent meanwhile.
    func run(_ query: PostgresQuery) throws -> (rows: [PostgresRow], notices: [String]) {
        _ = notices.take()
        let result = try connection.query(query, logger: quiet).wait()
        return (Array(result.rows), notices.take())
    }

    /// Runs `body` inside `BEGIN` … `COMMIT` and returns its result with the notices the
    /// server sent until the COMMIT's reply.
    ///
    /// Never a lone statement for a write: postgres-nio answers a query at its
    /// CommandComplete, which the server sends *before* it commits an implicit transaction
    /// (at the protocol's Sync), so a lone INSERT would be answered before it is durable, let
    /// alone on the standby. An explicit COMMIT is committed, and waits for the synchronous
    /// standby, before its CommandComplete. A failure rolls back (when it still can) and
    /// throws.
    func transaction<Result>(_ body: (PostgresLink) throws -> Result) throws -> (result: Result, notices: [String]) {
        _ = notices.take()
        _ = try connection.query("BEGIN", logger: quiet).wait()
        let result: Result
        do {
            result = try body(self)
        } catch {
            _ = try? connection.query("ROLLBACK", logger: quiet).wait()
            throw error
        }
        _ = try connection.query("COMMIT", logger: quiet).wait()
        return (result, notices.take())
    }

    /// Runs `query` and returns its rows (notices ignored).
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        try run(query).rows
    }

    var isClosed: Bool { connection.isClosed }

    func close() {
        try? connection.close().wait()
    }
}

/// The notices a connection received since they were last taken.
final class NoticeRecorder: Sendable {
    private let received = Mutex<[String]>([])

    func record(_ notice: String) { received.withLock { $0.append(notice) } }

    func take() -> [String] { received.withLock { notices in defer { notices = [] }; return notices } }
}

/// Reads the backend messages postgres-nio logs at trace level and keeps the notices.
struct NoticeHandler: LogHandler {
    let recorder: NoticeRecorder
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level == .trace, let value = event.metadata?["psql_message"] else { return }
        let message = "\(value)"
        guard message.hasPrefix(".notice(") else { return }
        recorder.record(message)
    }
}
