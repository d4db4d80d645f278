// HeraldServer: Herald as a long-running HTTP service (`herald serve`), on Hummingbird 2.
//
// It owns no state of its own beyond `STORE/serve/` (tokens, idempotency keys, pushkeys,
// Web Push subscriptions): every request goes to the same `Store` API an embedder uses,
// through a `StoreHost`: appends suspend on the store's write path, and a thread pool keeps
// the other blocking calls (log reads, the state lock) off the event loops and the
// cooperative pool. Map of the module:
// - `HeraldServer` (this file): routes, run and shutdown; `ServerConfiguration(+Reader)`;
// - `HeraldServer+Ingest`, `+Read`, `+Matrix`, `+WebPush`, `+Admin`: the endpoints;
// - `HeraldServer+Accounts`: moving an account between instances, HAProxy route maps;
// - `HeraldServer+Maintenance`: compaction and archive retention, scheduled and on request;
// - `ServedConsole`: the web console (module HeraldConsole) over this server's store;
// - `UpdateStream`: Server-Sent Events of the update stream, the store's resumable follow;
// - `TokenMiddleware`: the bearer token check of each route group;
// - `StoreHost`: the store and the threads that call it;
// - `TokenAuthority`, `Idempotency`, `ServiceTables`, `PushkeyRegistry`, `ServerMetrics`.

import Foundation
import HeraldConsole
import HeraldEvents
import HeraldReplication
import HeraldStore
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The Herald HTTP service over one store.
public final class HeraldServer: Sendable {
    /// How it runs.
    public let configuration: ServerConfiguration
    /// The open store and the threads that call it.
    public let host: StoreHost
    let tokens: TokenAuthority
    let idempotency: Idempotency
    let metrics = ServerMetrics()
    /// Rate limits of the unauthenticated push endpoints, by subscription token or pushkey.
    let endpointLimits: TokenBuckets
    let logger: Logger
    /// The replicated log (`--replicated-log`), or `nil`: the local log only.
    public let replicatedLog: ReplicatedLog?
    /// The admin token generated at this start (no `HERALD_ADMIN_TOKEN` and none stored):
    /// shown once to whoever starts the server, never stored in clear.
    public let generatedAdminToken: String?

    /// Opens the store (creating it) and the service tables. With a replicated log, first
    /// connects to it and checks it (nothing is written when that fails), then catches the
    /// store up with it before returning.
    public init(configuration: ServerConfiguration) throws {
        self.configuration = configuration
        logger = configuration.logger
        var storeOptions = configuration.storeOptions
        storeOptions.quarantineLimitBytes = configuration.quarantineMaxBytes > 0 ? configuration.quarantineMaxBytes : nil
        storeOptions.logger = configuration.logger
        storeOptions.logger[metadataKey: "component"] = "store"
        let tablesSynced = SyncHook()
        replicatedLog = try configuration.replicatedLog.map {
            try Self.openReplicatedLog($0, storePath: configuration.storePath, logger: configuration.logger)
        }
        storeOptions.replication = replicatedLog
        if replicatedLog != nil, storeOptions.durability == .full {
            // PostgreSQL holds every record before LMDB gets it, and a start catches the store
            // up from it, so the local commit need only stay consistent through a machine
            // crash, not durable: `MDB_NOMETASYNC` undoes at most the last commit then, with
            // one fsync per group commit instead of two (schema/replicated-log.md).
            storeOptions.durability = .noMetaSync
        }
        do {
            host = try StoreHost(path: configuration.storePath, options: storeOptions, threads: configuration.storeThreads)
        } catch {
            replicatedLog?.close()
            throw error
        }
        if let replicatedLog {
            do {
                try Self.startReplication(replicatedLog, host: host, logger: configuration.logger, synced: tablesSynced)
            } catch {
                replicatedLog.close()
                try? host.closeNow()
                throw error
            }
        }
        tokens = try TokenAuthority(
            tables: host.tables, adminToken: configuration.adminToken, requestsPerSecond: configuration.requestsPerSecondPerToken)
        idempotency = Idempotency(
            host: host, windowSeconds: configuration.idempotencySeconds, clock: configuration.storeOptions.clock)
        endpointLimits = TokenBuckets(rate: configuration.endpointRequestsPerSecond, burst: configuration.endpointBurst)
        // Fenced accounts (moved, or moving, elsewhere) stay refused across restarts.
        let fenced = Set(try host.tables.all(.fences, as: Fence.self).map(\.key))
        if !fenced.isEmpty { host.setFencedNow(fenced) }
        if tokens.hasAdmin {
            generatedAdminToken = nil
        } else {
            generatedAdminToken = try tokens.create(name: "admin", scopes: [.admin], now: Int64(Date().timeIntervalSince1970 * 1000))
        }
        tablesSynced.set { [tokens, logger] in
            do { try tokens.reload() } catch { logger.error("reloading tokens failed", metadata: ["error": "\(error)"]) }
        }
    }

    /// The routes.
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ErrorMiddleware(logger: logger))
        if let replicatedLog { router.add(middleware: ReplicationGate(log: replicatedLog)) }
        router.get("/healthz") { _, _ in JSONValue.object(["status": .string("ok")]).response() }
        router.get("/readyz") { _, _ in
            self.host.isOpen && self.replicatedLog?.isReady ?? true
                ? JSONValue.object(["status": .string("ready")]).response()
                : JSONValue.object(["status": .string("unavailable")]).response(status: .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in try await self.metricsResponse() }
        // Grouped by who may call them: each group's middleware checks the bearer token and
        // its scope before any of its handlers runs. The push endpoints (Matrix, Web Push)
        // take no bearer token: a registered pushkey or subscription token is the credential.
        let readingPathAccount = TokenMiddleware(tokens) { _, context in .read(account: try Self.pathAccount(context)) }
        let readingAuditAccount = TokenMiddleware(tokens) { request, _ in .read(account: try Self.auditAccount(request)) }
        let admin = router.group("/v1/admin").add(middleware: TokenMiddleware(tokens, scope: .admin))
        addIngestRoutes(to: router.group().add(middleware: TokenMiddleware(tokens, scope: .ingest)))
        addAccountReadRoutes(to: router.group("/v1/accounts/:account").add(middleware: readingPathAccount))
        addAuditRoute(to: router.group().add(middleware: readingAuditAccount))
        addStatsRoute(to: router.group().add(middleware: TokenMiddleware(tokens, scope: .read(account: "*"))))
        addAdminRoutes(to: admin)
        addAccountRoutes(to: admin)
        addMatrixRoutes(to: router, admin: admin)
        addWebPushRoutes(to: router, admin: admin)
        addTelegramKeyRoutes(to: admin)
        // The web console: pages behind a `read:` token (a bearer header or the sign-in cookie).
        Console(store: ServedConsole(server: self), access: .tokens { [tokens] in tokens.consoleGrant($0) }).addRoutes(to: router)
        return router
    }

    /// Serves until cancelled or, with `gracefulShutdownSignals`, until one arrives: then it
    /// stops accepting connections, lets requests in flight finish (update streams end), takes
    /// a final snapshot and closes the store.
    ///
    /// - Parameter onListening: called with the port once the server listens (useful with
    ///   port 0).
    public func run(
        gracefulShutdownSignals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let app = Application(
            responder: RequestMetricsResponder(inner: makeRouter().buildResponder(), metrics: metrics),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "herald"),
            services: [
                PeriodicService(name: "snapshot", seconds: configuration.snapshotSeconds, logger: logger) {
                    try await self.snapshotIfNeeded()
                },
                PeriodicService(name: "compaction", seconds: configuration.compactSeconds, logger: logger) {
                    _ = try await self.maintain()
                },
                // Expired idempotency keys are removed every tenth of their window (at most hourly).
                PeriodicService(
                    name: "idempotency expiry", seconds: configuration.idempotencySeconds == 0 ? 0 : min(3600, max(1, configuration.idempotencySeconds / 10)),
                    logger: logger
                ) {
                    let removed = try await self.idempotency.expire()
                    if removed > 0 { self.logger.info("idempotency keys expired", metadata: ["removed": "\(removed)"]) }
                },
            ],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        var failure: (any Error)?
        do {
            // Without signals (an embedder, a test) only cancellation stops it: then the
            // application runs without an outer service group, whose graceful shutdown the
            // application's own group would await through ServiceLifecycle's waiter, which
            // ends in an unstructured task: stopping would wait for a free thread of the
            // cooperative pool.
            if gracefulShutdownSignals.isEmpty {
                try await app.run()
            } else {
                try await app.runService(gracefulShutdownSignals: gracefulShutdownSignals)
            }
        } catch {
            failure = error
        }
        // The final snapshot, then the store closed; cancelling `run` does not stop them
        // (``StoreHost/close(after:)`` runs on a thread of its own).
        await host.close { [logger] store in
            do {
                if let seq = try Self.snapshotIfNeeded(store) { logger.info("final snapshot", metadata: ["seq": "\(seq)"]) }
            } catch {
                logger.error("final snapshot failed", metadata: ["error": "\(error)"])
            }
        }
        replicatedLog?.close()
        logger.info("stopped")
        if let failure, !(failure is CancellationError) { throw failure }
    }

    /// `/metrics`: the counters, and gauges read from the store now (cheap reads only: no
    /// scan of the log).
    func metricsResponse() async throws -> Response {
        if host.isOpen, let gauges = try? await host.run({ store in
            (store.lastSeq, try store.snapshots.seqs().last ?? 0, try store.quarantine.all().count, store.environmentInfo().usedBytes)
        }) {
            let (last, snapshot, quarantined, used) = gauges
            metrics.lastSeq.set(Double(last))
            metrics.snapshotAge.set(Double(last - min(last, snapshot)))
            metrics.quarantineSize.set(Double(quarantined))
            metrics.logBytes.set(Double(used))
            metrics.storeFileBytes.set(Double(Self.fileSize(host.path + "/data.mdb")))
            metrics.archiveBytes.set(Double(Self.fileSize(host.path + "/archive/data.mdb")))
        }
        var buffer = ByteBuffer()
        buffer.writeBytes(metrics.render())
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: ResponseBody(byteBuffer: buffer))
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}

/// Runs `work` every `seconds` seconds until the graceful shutdown (never when `seconds` is
/// 0): the scheduled snapshots and compactions. A failure is logged and the next period
/// tries again.
///
/// It ends at the graceful shutdown or when cancelled without a free thread of the
/// cooperative pool: ServiceLifecycle's `gracefulShutdown()` and `cancelWhenGracefulShutdown`
/// end through an unstructured task, which waits for one (``GracefulShutdownGate``).
struct PeriodicService: Service {
    let name: String
    let seconds: Int
    let logger: Logger
    let work: @Sendable () async throws -> Void

    func run() async throws {
        await GracefulShutdownGate.run { shutdown in
            await withDiscardingTaskGroup { group in
                if seconds > 0 { group.addTask { await repeatWork() } }
                await shutdown.wait()
                group.cancelAll()
            }
        }
    }

    /// Runs `work` every `seconds` seconds until cancelled.
    private func repeatWork() async {
        while true {
            do {
                try await Task.sleep(for: .seconds(seconds))
                try await work()
            } catch is CancellationError {
                return
            } catch {
                logger.error("scheduled \(name) failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// The graceful shutdown of the running service, as an `AsyncStream` that a graceful shutdown
/// finishes: awaiting it ends at the shutdown, or when the task is cancelled, by resuming the
/// waiting task directly, so neither needs a free thread of the cooperative pool (the
/// waits ServiceLifecycle offers end through an unstructured task, which runs there).
struct GracefulShutdownGate: Sendable {
    private let stream: AsyncStream<Never>

    /// Runs `body` with the gate of the graceful shutdown of the service it runs in.
    static func run<Result>(_ body: (GracefulShutdownGate) async throws -> Result) async rethrows -> Result {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        return try await withGracefulShutdownHandler {
            try await body(GracefulShutdownGate(stream: stream))
        } onGracefulShutdown: {
            continuation.finish()
        }
    }

    /// Returns at the graceful shutdown, or once the task is cancelled.
    func wait() async {
        for await _ in stream {}
    }
}

extension HeraldServer {
    /// Takes a snapshot when events were appended since the newest one; returns its seq.
    @discardableResult
    func snapshotIfNeeded() async throws -> UInt64? {
        try await host.run(Self.snapshotIfNeeded)
    }

    /// Takes a snapshot of `store` unless it has one of its last seq (or is empty); returns
    /// its seq. Blocking.
    static func snapshotIfNeeded(_ store: Store) throws -> UInt64? {
        let last = store.lastSeq
        guard last > 0, try store.snapshots.seqs().last != last else { return nil }
        return try store.snapshot()
    }
}
