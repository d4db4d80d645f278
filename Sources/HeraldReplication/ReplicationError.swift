/// Why the replicated log refused or failed: each names what and where (the database by its
/// address without the password, the log id, the seq).
public struct ReplicationError: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Hashable {
        /// `--replicated-log` is not a PostgreSQL URL Herald can use.
        case badURL
        /// The server could not be reached (refused, no route, timeout).
        case unreachable
        /// The server refused the user or password, or has no such database.
        case authentication
        /// The database holds a Herald schema newer than this binary's.
        case schemaNewer
        /// Another node owns the log id and was heard from recently.
        case owned
        /// Another node took the log id over: this node never writes again under its epoch.
        case fenced
        /// PostgreSQL is unreachable or failing over: retry later.
        case unavailable
        /// A commit whose outcome is unknown (the connection broke, or the synchronous wait
        /// was cancelled): not acknowledged; the node reads the log back before writing again.
        case outcomeUnknown
        /// The local log and PostgreSQL hold different records at the same seq.
        case disagreement
        /// The local log holds seqs PostgreSQL does not.
        case localAhead
        /// A follower (`--follow`) accepts no writes.
        case follower
        /// Any other error of the database.
        case database
        /// `herald log prune` refused.
        case pruneRefused
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether a client should retry the request later (503 with `Retry-After`).
    public var isRetryable: Bool { code == .unavailable || code == .outcomeUnknown }

    public var description: String { message }
}
