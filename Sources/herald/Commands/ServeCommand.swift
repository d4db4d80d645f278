import ArgumentParser
import Foundation
import HeraldEvents
import HeraldServer
import Configuration
import Logging
import SystemPackage
import Synchronization

/// `herald serve`: the store as an HTTP service (HeraldServer); `herald serve pushkeys`
/// registers Matrix pushkeys to accounts.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP (the default), or manage what the service keeps.",
        subcommands: [ServeRunCommand.self, ServePushkeysCommand.self, ServeSubscriptionsCommand.self, ServeExpireCommand.self],
        defaultSubcommand: ServeRunCommand.self
    )
}

/// `herald serve [run]`: the server itself.
struct ServeRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Serve the store over HTTP: ingest, state, update streams, Matrix push gateway, metrics.",
        discussion: """
            The admin token comes from $HERALD_ADMIN_TOKEN; without it, the first start generates
            one and prints it once (only its SHA-256 is stored). SIGTERM or SIGINT stops
            accepting, lets requests finish, takes a final snapshot and exits.
            /healthz, /readyz and /metrics need no token: keep them on an internal address.
            Without --public-url, Web Push endpoints are handed out as paths
            (/push/TOKEN) for the application server to prefix, and VAPID audiences
            are checked against the request's Host. Every key and its default:
            Tools/SERVE.md.

            Example:
              HERALD_ADMIN_TOKEN=secret herald serve --store ./herald.db --listen 127.0.0.1:8080
            """
    )

    @Option(name: .long, help: ArgumentHelp("The store directory (herald.store, $HERALD_STORE; default ./herald.db).", valueName: "DIR"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("The address to listen on (herald.listen, $HERALD_LISTEN; default 127.0.0.1:8080).", valueName: "HOST:PORT"))
    var listen: String?

    @Option(name: .long, help: ArgumentHelp("The base URL application servers reach this server at; Web Push endpoints are handed out under it (herald.public.url, $HERALD_PUBLIC_URL; default none: endpoints are paths, /push/TOKEN).", valueName: "URL"))
    var publicURL: String?

    @Option(name: .long, help: ArgumentHelp("A JSON configuration file: {\"herald\": {\"store\": …, \"listen\": …}}; flags, then the environment, override it.", valueName: "FILE"))
    var config: String?

    @Option(name: .long, help: "The largest request body accepted, in bytes (herald.max.body.bytes; default 4 MiB).")
    var maxBodyBytes: Int?

    @Option(name: .long, help: "Seconds between automatic snapshots while events arrive, 0 for none (herald.snapshot.seconds; default 300).")
    var snapshotSeconds: Int?

    @Option(name: .long, help: "Requests per second allowed per token, bursts of twice as many; 0 for no limit (herald.rate.limit; default 0).")
    var rateLimit: Int?

    @Option(name: .long, help: "Requests per second allowed per Web Push subscription or Matrix pushkey, 0 for no limit (herald.ratelimit.endpoint.rate; default 10).")
    var ratelimitEndpointRate: Int?

    @Option(name: .long, help: "Requests a Web Push subscription or Matrix pushkey may make at once (herald.ratelimit.endpoint.burst; default 100).")
    var ratelimitEndpointBurst: Int?

    @Option(name: .long, help: "Seconds between keep-alive comments on an idle update stream (herald.heartbeat.seconds; default 15).")
    var heartbeatSeconds: Int?

    @Option(name: .long, help: "Seconds between compactions while serving (then retention), 0 for none (herald.compact.seconds; default 0).")
    var compactSeconds: Int?

    @Option(name: .long, help: "Bytes the quarantine may hold before its oldest entries are dropped, 0 for no limit (herald.quarantine.max.bytes; default 64 MiB).")
    var quarantineMaxBytes: Int?

    @Option(name: .long, help: "Archived records older than this expire: exported, then removed (herald.retention.max.age.seconds).")
    var retentionMaxAgeSeconds: Int?

    @Option(name: .long, help: "Archived records beyond this many stored bytes expire, oldest first (herald.retention.max.bytes).")
    var retentionMaxBytes: Int?

    @Option(name: .long, help: ArgumentHelp("Where expired ranges are exported (herald.retention.export.directory; default STORE/archive-exports).", valueName: "DIR"))
    var retentionExportDirectory: String?

    @Option(name: .long, help: "Seconds idempotency keys are kept, 0 for ever (herald.idempotency.seconds; default 86400).")
    var idempotencySeconds: Int?

    @Option(name: .long, help: ArgumentHelp("Replicate the log through PostgreSQL: commits go there first, a replacement node catches up from it (herald.log.url, $HERALD_LOG_URL; the password is never printed). Needs --log-id.", valueName: "postgres://USER:PASSWORD@HOST:PORT/DATABASE"))
    var replicatedLog: String?

    @Option(name: .long, help: ArgumentHelp("The partition's log id in the replicated log (herald.log.id, $HERALD_LOG_ID).", valueName: "ID"))
    var logId: String?

    @Flag(name: .long, help: "Follow the replicated log read-only: apply what the owner commits, serve reads and update streams (herald.log.follow). Restart without it to promote the node.")
    var follow = false

    @Flag(name: .long, help: "Take the log id over even when its owner was heard from in the last 10 s; the owner is fenced (herald.log.takeover).")
    var takeOver = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        if let listen, ServerConfiguration.address(listen) == nil {
            throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:8080")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    /// Flags first, then the environment, then the `--config` file.
    func serverConfiguration() async throws -> ServerConfiguration {
        var flags: [AbsoluteConfigKey: ConfigValue] = [:]
        if let store { flags["herald.store"] = .init(.string(store), isSecret: false) }
        if let listen { flags["herald.listen"] = .init(.string(listen), isSecret: false) }
        if let publicURL { flags["herald.public.url"] = .init(.string(publicURL), isSecret: false) }
        if let ratelimitEndpointRate { flags["herald.ratelimit.endpoint.rate"] = .init(.int(ratelimitEndpointRate), isSecret: false) }
        if let ratelimitEndpointBurst { flags["herald.ratelimit.endpoint.burst"] = .init(.int(ratelimitEndpointBurst), isSecret: false) }
        if let heartbeatSeconds { flags["herald.heartbeat.seconds"] = .init(.int(heartbeatSeconds), isSecret: false) }
        if let maxBodyBytes { flags["herald.max.body.bytes"] = .init(.int(maxBodyBytes), isSecret: false) }
        if let snapshotSeconds { flags["herald.snapshot.seconds"] = .init(.int(snapshotSeconds), isSecret: false) }
        if let rateLimit { flags["herald.rate.limit"] = .init(.int(rateLimit), isSecret: false) }
        if let compactSeconds { flags["herald.compact.seconds"] = .init(.int(compactSeconds), isSecret: false) }
        if let quarantineMaxBytes { flags["herald.quarantine.max.bytes"] = .init(.int(quarantineMaxBytes), isSecret: false) }
        if let retentionMaxAgeSeconds { flags["herald.retention.max.age.seconds"] = .init(.int(retentionMaxAgeSeconds), isSecret: false) }
        if let retentionMaxBytes { flags["herald.retention.max.bytes"] = .init(.int(retentionMaxBytes), isSecret: false) }
        if let retentionExportDirectory {
            flags["herald.retention.export.directory"] = .init(.string(retentionExportDirectory), isSecret: false)
        }
        if let idempotencySeconds { flags["herald.idempotency.seconds"] = .init(.int(idempotencySeconds), isSecret: false) }
        if let replicatedLog { flags["herald.log.url"] = .init(.string(replicatedLog), isSecret: true) }
        if let logId { flags["herald.log.id"] = .init(.string(logId), isSecret: false) }
        if follow { flags["herald.log.follow"] = .init(.bool(true), isSecret: false) }
        if takeOver { flags["herald.log.takeover"] = .init(.bool(true), isSecret: false) }
        let reader = try await Self.configReader(flags: flags, file: config)
        return try Self.usageFailure { try ServerConfiguration(reading: reader) }
    }

    /// The providers of `herald serve` and its tools: `flags` first, then the environment,
    /// then the JSON `file`.
    static func configReader(flags: [AbsoluteConfigKey: ConfigValue], file: String?) async throws -> ConfigReader {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flags),
            EnvironmentVariablesProvider(secretsSpecifier: .specific(["HERALD_ADMIN_TOKEN", "HERALD_LOG_URL"])),
        ]
        if let file { providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file))) }
        return ConfigReader(providers: providers)
    }

    /// `body`'s value; a ``ServerError`` (a bad configuration value) becomes a usage failure
    /// naming the key.
    static func usageFailure<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let error as ServerError {
            throw CLIFailure(exitCode: CLIFailure.usage, "\(error.field): \(error.reason)")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        var configuration = try await serverConfiguration()
        configuration.logger = Logger(label: "herald.serve")
        let server = try HeraldServer(configuration: configuration)
        if let token = server.generatedAdminToken {
            // Shown once: only its hash is stored.
            FileHandle.standardOutput.write(Data("admin token (shown once, store it now): \(token)\n".utf8))
        }
        let (host, path) = (configuration.host, configuration.storePath)
        try await server.run { port in
            FileHandle.standardOutput.write(Data("herald serve: listening on \(host):\(port), store \(path)\n".utf8))
        }
    }
}

/// `herald serve pushkeys add|list|remove`: Matrix pushkeys registered to accounts (what
/// `POST /v1/admin/pushkeys` does), beside a running server or not.
struct ServePushkeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushkeys",
        abstract: "Register Matrix pushkeys to accounts for /_matrix/push/v1/notify.",
        discussion: """
            Examples:
              herald serve pushkeys add --store ./herald.db --pushkey PUSHKEY --account mx:@alice:example.org
              herald serve pushkeys list --store ./herald.db --json
              herald serve pushkeys remove --store ./herald.db --pushkey PUSHKEY
            """
    )

    @OptionGroup var store: StoreOptions

    @Argument(help: "add, list or remove.")
    var action: String

    @Option(name: .long, help: "The pushkey, as the homeserver sends it.")
    var pushkey: String?

    @Option(name: .long, help: "The account its notifications belong to (add).")
    var account: String?

    @Option(name: .long, help: "The Matrix app_id (add; optional).")
    var appId: String?

    @Flag(name: .long, help: "Print JSON, as the admin API answers: an object for add and remove, one object per line for list (schema/pushkey-line.schema.json).")
    var json = false

    func validate() throws {
        switch action {
        case "add":
            guard pushkey?.isEmpty == false, account?.isEmpty == false else { throw ValidationError("add needs --pushkey and --account") }
        case "remove":
            guard pushkey?.isEmpty == false else { throw ValidationError("remove needs --pushkey") }
        case "list": break
        default: throw ValidationError("unknown action '\(action)'; expected add, list or remove")
        }
    }

    func run() throws {
        let registry = try PushkeyRegistry(storePath: store.path)
        switch action {
        case "add":
            try registry.register(pushkey: pushkey!, account: account!, appId: appId)
            Terminal.line(json ? Self.json(pushkey: pushkey!, account: account!, appId: appId) : "pushkey registered to \(account!)")
        case "remove":
            guard try registry.remove(pushkey: pushkey!) else { throw CLIFailure(exitCode: CLIFailure.usage, "pushkey not registered") }
            Terminal.line(json ? ServeSubscriptionsCommand.removed(pushkey!) : "pushkey removed")
        default:
            for entry in try registry.all() {
                Terminal.line(
                    json ? Self.json(pushkey: entry.pushkey, account: entry.account, appId: entry.appId)
                        : [entry.pushkey, entry.account, entry.appId ?? ""].joined(separator: "\t"))
            }
        }
    }

    /// `{"pushkey", "account", "app_id"}` (`app_id` only when registered with one), as
    /// `GET /v1/admin/pushkeys` lists them.
    static func json(pushkey: String, account: String, appId: String?) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("pushkey"); writer.string(pushkey)
        writer.key("account"); writer.string(account)
        if let appId { writer.key("app_id"); writer.string(appId) }
        writer.objectEnd()
        return writer.string
    }
}
