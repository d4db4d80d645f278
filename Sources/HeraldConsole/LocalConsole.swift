import Foundation
import HeraldStore
import Hummingbird
import Logging
import NIOPosix

/// `herald console`: the console over a store on disk, read-only, often a damaged copy. The
/// store is opened once, read-only (as `herald state` opens it); when that fails every page
/// shows why, and the process keeps serving.
public final class LocalConsoleStore: ConsoleStore {
    public let path: String
    private let store: Store?
    private let failure: String?
    private let pool: NIOThreadPool

    /// How many of the newest records the store page reads for the last hour's ingest rate.
    static let recentRecords: UInt64 = 20_000

    /// Opens the store with `open`; a failure is kept and shown on every page.
    public init(path: String, open: () throws -> Store) {
        self.path = path
        do {
            store = try open()
            failure = nil
        } catch {
            store = nil
            failure = "\(error)"
        }
        pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
    }

    /// Why the store could not be opened, or `nil`.
    public var openFailure: String? { failure }

    public func run<Result: Sendable>(_ body: @escaping @Sendable (Store) throws -> Result) async throws -> Result {
        guard let store else { throw ConsoleUnavailable(failure ?? "the store is not open") }
        return try await pool.runIfActive { try body(store) }
    }

    public func updateStream(_ request: Request, account: String) async throws -> Response? { nil }

    /// Events per minute of the last hour, from the `recorded` times of the newest records.
    public func activity() async throws -> ConsoleActivity.Series {
        let limit = Self.recentRecords
        let now = Date().timeIntervalSince1970
        let times = try await run { store -> [Int64] in
            let bounds = try store.history.bounds()
            guard let first = bounds.firstSeqInLog else { return [] }
            let from = max(first, bounds.lastSeqInLog > limit ? bounds.lastSeqInLog - limit + 1 : 1)
            var times: [Int64] = []
            try store.history.forEach(from: from) { record in
                times.append(record.recordedAt)
                return true
            }
            return times
        }
        return ConsoleActivity.fromRecorded(
            times, now: now, note: "events from the recorded times of the newest \(limit) records of this copy; no request latency (nothing is served from it)")
    }

    /// Serves the console at `host:port` until SIGINT or SIGTERM; `onListening` gets the
    /// port (useful with port 0).
    public func serve(host: String, port: Int, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void) async throws {
        let router = Router()
        Console(store: self, access: .local).addRoutes(to: router)
        router.get("/") { _, _ in Response(status: .seeOther, headers: [.location: "/console/"]) }
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "herald-console"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) }, logger: logger)
        try await app.runService()
        try? await pool.shutdownGracefully()
    }
}
