import Configuration
import HeraldStore

extension ServerConfiguration {
    /// A configuration read with swift-configuration, from whatever providers `config` has
    /// (`herald serve`: its flags, then the environment, then the `--config` JSON file):
    ///
    /// | key | environment | JSON | default |
    /// |---|---|---|---|
    /// | `herald.store` | `HERALD_STORE` | `{"herald": {"store": …}}` | `./herald.db` |
    /// | `herald.listen` | `HERALD_LISTEN` | `"listen"` | `127.0.0.1:8080` |
    /// | `herald.public.url` | `HERALD_PUBLIC_URL` | `"public": {"url": …}` | none (endpoints are paths) |
    /// | `herald.admin.token` (secret) | `HERALD_ADMIN_TOKEN` | `"admin": {"token": …}` | none |
    /// | `herald.max.body.bytes` | `HERALD_MAX_BODY_BYTES` | `"max": {"body": {"bytes": …}}` | 4 MiB |
    /// | `herald.snapshot.seconds` | `HERALD_SNAPSHOT_SECONDS` | `"snapshot": {"seconds": …}` | 300 |
    /// | `herald.rate.limit` | `HERALD_RATE_LIMIT` | `"rate": {"limit": …}` | 0 (none) |
    /// | `herald.ratelimit.endpoint.rate` | `HERALD_RATELIMIT_ENDPOINT_RATE` | `"ratelimit": {"endpoint": {"rate": …}}` | 10 (0: none) |
    /// | `herald.ratelimit.endpoint.burst` | `HERALD_RATELIMIT_ENDPOINT_BURST` | `"ratelimit": {"endpoint": {"burst": …}}` | 100 |
    /// | `herald.heartbeat.seconds` | `HERALD_HEARTBEAT_SECONDS` | `"heartbeat": {"seconds": …}` | 15 |
    /// | `herald.compact.seconds` | `HERALD_COMPACT_SECONDS` | `"compact": {"seconds": …}` | 0 (none) |
    /// | `herald.retention.max.age.seconds` | `HERALD_RETENTION_MAX_AGE_SECONDS` | `"retention": {"max": {"age": {"seconds": …}}}` | none |
    /// | `herald.retention.max.bytes` | `HERALD_RETENTION_MAX_BYTES` | `"retention": {"max": {"bytes": …}}` | none |
    /// | `herald.retention.export.directory` | `HERALD_RETENTION_EXPORT_DIRECTORY` | `"retention": {"export": {"directory": …}}` | `STORE/archive-exports` |
    /// | `herald.idempotency.seconds` | `HERALD_IDEMPOTENCY_SECONDS` | `"idempotency": {"seconds": …}` | 86400 |
    /// | `herald.quarantine.max.bytes` | `HERALD_QUARANTINE_MAX_BYTES` | `"quarantine": {"max": {"bytes": …}}` | 64 MiB (0: none) |
    /// | `herald.log.url` (secret) | `HERALD_LOG_URL` | `"log": {"url": …}` | none (the local log only) |
    /// | `herald.log.id` | `HERALD_LOG_ID` | `"log": {"id": …}` | none (required with the URL) |
    /// | `herald.log.follow` | `HERALD_LOG_FOLLOW` | `"log": {"follow": …}` | none (false) |
    /// | `herald.log.takeover` | `HERALD_LOG_TAKEOVER` | `"log": {"takeover": …}` | none (false) |
    /// | `herald.log.node` | `HERALD_LOG_NODE` | `"log": {"node": …}` | none (`HOSTNAME:STORE`) |
    ///
    /// Retention is on when either limit is set.
    ///
    /// `Tools/SERVE.md` lists every key with its default (a test checks it against the keys
    /// this initializer reads).
    ///
    /// Throws ``ServerError`` (400, naming the key) for a malformed `herald.listen` or
    /// `herald.public.url`.
    public init(reading config: ConfigReader) throws {
        self.init(storePath: config.string(forKey: "herald.store", default: "./herald.db"))
        let listen = config.string(forKey: "herald.listen", default: "127.0.0.1:8080")
        guard let address = Self.address(listen) else {
            throw ServerError.badRequest(field: "herald.listen", "expected HOST:PORT, got \"\(listen)\"")
        }
        (host, port) = address
        publicURL = try Self.publicURL(reading: config)
        adminToken = config.string(forKey: "herald.admin.token", isSecret: true).flatMap { $0.isEmpty ? nil : $0 }
        maxBodyBytes = config.int(forKey: "herald.max.body.bytes", default: maxBodyBytes)
        snapshotSeconds = config.int(forKey: "herald.snapshot.seconds", default: snapshotSeconds)
        requestsPerSecondPerToken = config.int(forKey: "herald.rate.limit", default: requestsPerSecondPerToken)
        endpointRequestsPerSecond = config.int(forKey: "herald.ratelimit.endpoint.rate", default: endpointRequestsPerSecond)
        endpointBurst = config.int(forKey: "herald.ratelimit.endpoint.burst", default: endpointBurst)
        heartbeatSeconds = config.int(forKey: "herald.heartbeat.seconds", default: heartbeatSeconds)
        compactSeconds = config.int(forKey: "herald.compact.seconds", default: compactSeconds)
        idempotencySeconds = config.int(forKey: "herald.idempotency.seconds", default: idempotencySeconds)
        quarantineMaxBytes = config.int(forKey: "herald.quarantine.max.bytes", default: quarantineMaxBytes)
        replicatedLog = try Self.replicatedLog(reading: config)
        let maxAge = config.int(forKey: "herald.retention.max.age.seconds")
        let maxBytes = config.int(forKey: "herald.retention.max.bytes")
        if maxAge != nil || maxBytes != nil {
            retention = ArchiveRetention(
                maxAgeSeconds: maxAge.map(Int64.init), maxBytes: maxBytes,
                exportDirectory: config.string(
                    forKey: "herald.retention.export.directory", default: storePath + "/" + Self.defaultExportDirectory))
        }
    }

    /// `herald.public.url`, checked (``PublicURL``), or `nil` when not set: for the tools
    /// that print endpoints (`herald serve subscriptions`) as well as the server.
    public static func publicURL(reading config: ConfigReader) throws -> PublicURL? {
        try config.string(forKey: "herald.public.url").flatMap { $0.isEmpty ? nil : try PublicURL($0) }
    }

    /// `herald.log.*`: the replicated log, or `nil` when no URL is set.
    static func replicatedLog(reading config: ConfigReader) throws -> ReplicatedLogSettings? {
        let url = config.string(forKey: "herald.log.url", isSecret: true) ?? ""
        let logId = config.string(forKey: "herald.log.id") ?? ""
        let follow = config.bool(forKey: "herald.log.follow", default: false)
        let takeOver = config.bool(forKey: "herald.log.takeover", default: false)
        let node = config.string(forKey: "herald.log.node").flatMap { $0.isEmpty ? nil : $0 }
        guard !url.isEmpty else {
            if !logId.isEmpty { throw ServerError.badRequest(field: "herald.log.id", "needs herald.log.url (--replicated-log)") }
            return nil
        }
        guard !logId.isEmpty else { throw ServerError.badRequest(field: "herald.log.id", "required with herald.log.url (--log-id ID)") }
        var settings = ReplicatedLogSettings(url: url, logId: logId)
        settings.follow = follow
        settings.takeOver = takeOver
        settings.node = node
        if settings.follow && settings.takeOver {
            throw ServerError.badRequest(field: "herald.log.takeover", "a follower (--follow) takes nothing over")
        }
        return settings
    }

    /// Where retention exports go when `herald.retention.export.directory` is not set, inside
    /// the store directory.
    public static let defaultExportDirectory = "archive-exports"

    /// `HOST:PORT` (`[::1]:8080` for IPv6) split, or `nil`.
    public static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
