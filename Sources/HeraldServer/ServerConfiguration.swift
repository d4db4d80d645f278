import Foundation
import HeraldStore
import Logging

/// How `herald serve` runs.
public struct ServerConfiguration: Sendable {
    /// The store's directory.
    public var storePath: String
    /// The address to listen on (`127.0.0.1`, `0.0.0.0`, `::`).
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (see ``HeraldServer/run(onListening:)``).
    public var port = 8080
    /// The base URL application servers reach the server at (`herald.public.url`): Web
    /// Push endpoints are handed out under it and VAPID tokens must name its origin. `nil`:
    /// endpoints are the path alone (`/push/TOKEN`), and VAPID audiences are checked against
    /// the request's `Host`.
    public var publicURL: PublicURL?
    /// An admin token accepted without being stored (`HERALD_ADMIN_TOKEN`). Without one, and
    /// with no admin token stored, the first start generates one and hands it to
    /// ``HeraldServer/run(onListening:)``'s caller once.
    public var adminToken: String?
    /// The largest request body accepted, in bytes (413 above it).
    public var maxBodyBytes = 4 << 20
    /// Seconds between automatic snapshots while serving (0: none besides the store's own,
    /// every `snapshotInterval` events, and the final one at shutdown).
    public var snapshotSeconds = 300
    /// Seconds between scheduled compactions while serving (snapshot, archive the log below
    /// it, then apply ``retention``); 0: only `POST /v1/admin/compact`.
    public var compactSeconds = 0
    /// How much archived history to keep; expired ranges are exported before removal. `nil`:
    /// the archive grows without bound.
    public var retention: ArchiveRetention?
    /// Seconds an idempotency key is kept after its request; later, a retry with the key
    /// runs as a new request. 0: kept for ever.
    public var idempotencySeconds = 86_400
    /// Seconds between keep-alive comments on an idle update stream.
    public var heartbeatSeconds = 15
    /// Requests per second allowed per token (a burst of twice as many); 0: no limit. Over
    /// it, 429 with `Retry-After`.
    public var requestsPerSecondPerToken = 0
    /// Requests per second allowed per unauthenticated endpoint (a Web Push subscription, a
    /// Matrix pushkey), on average; 0: no limit. Over it, 429 with `Retry-After`.
    public var endpointRequestsPerSecond = 10
    /// The most requests an unauthenticated endpoint may make at once.
    public var endpointBurst = 100
    /// Threads that run store calls other than appends (reads, quarantine, snapshots).
    public var storeThreads = 16
    /// The store's options.
    public var storeOptions = Store.Options()
    /// The most bytes the store's quarantine may occupy before its oldest entries are
    /// dropped (`Store.Options.quarantineLimitBytes`); 0: no limit.
    public var quarantineMaxBytes = 64 << 20
    /// The replicated log (`--replicated-log URL --log-id ID`), or `nil`: the local log only.
    public var replicatedLog: ReplicatedLogSettings?
    /// The service's logger (the store gets a child of it).
    public var logger = Logger(label: "herald.serve")

    /// A configuration for the store at `storePath`.
    public init(storePath: String) {
        self.storePath = storePath
    }
}

/// How `herald serve` joins a log replicated through PostgreSQL (`schema/replicated-log.md`).
public struct ReplicatedLogSettings: Sendable {
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (`herald.log.url`, a secret: never printed).
    public var url: String
    /// The partition's log id (`herald.log.id`).
    public var logId: String
    /// Follow the log read-only instead of owning it (`--follow`, `herald.log.follow`).
    public var follow = false
    /// Take the log id over even from an owner heard from recently (`--take-over`).
    public var takeOver = false
    /// This node's name in the log's tables (`herald.log.node`); default `HOSTNAME:STORE`.
    public var node: String?

    public init(url: String, logId: String) {
        self.url = url
        self.logId = logId
    }
}
