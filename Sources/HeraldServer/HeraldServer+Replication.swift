import Foundation
import HeraldReplication
import HeraldStore
import Hummingbird
import Logging
import Synchronization

// `herald serve --replicated-log URL --log-id ID`: the store's commits go to PostgreSQL
// first (HeraldReplication), and the service tables and Telegram keys are written through to
// it, so that a replacement node gets them back (`schema/replicated-log.md`).

extension HeraldServer {
    /// The table name of Telegram keys among the replicated service entries (the store's
    /// keyring holds them locally).
    static let telegramKeysTable = "telegram-keys"

    /// Connects to the replicated log of `settings` and checks it (schema, owner); writes
    /// nothing. Throws ``ReplicationError`` naming what and where.
    static func openReplicatedLog(_ settings: ReplicatedLogSettings, storePath: String, logger: Logger) throws -> ReplicatedLog {
        let address = try LogAddress(settings.url)
        let node = settings.node ?? "\(ProcessInfo.processInfo.hostName):\(URL(fileURLWithPath: storePath).standardizedFileURL.path)"
        var logLogger = logger
        logLogger[metadataKey: "component"] = "replication"
        return try ReplicatedLog(
            address: address, logId: settings.logId, node: node, role: settings.follow ? .follower : .leader,
            takeOver: settings.takeOver, logger: logLogger)
    }

    /// Brings the store level with the log (catch-up, service tables) and starts replicating.
    /// `synced` runs after each replacement of the service tables from the log's.
    static func startReplication(_ log: ReplicatedLog, host: StoreHost, logger: Logger, synced: SyncHook) throws {
        let tables = host.tables
        try log.start(
            store: { [host] in host.currentStore },
            localService: {
                var entries = try tables.entries()
                if let store = host.currentStore {
                    entries += try store.keyring.all().map(Self.replicatedKey)
                }
                return entries
            },
            serviceEntries: { [host, role = log.role] entries in
                do {
                    // A follower keeps its own idempotency keys (it answers no writes).
                    let kept: [ServiceTables.Table] = role == .leader ? ServiceTables.Table.allCases : [.tokens, .pushkeys, .subscriptions, .fences]
                    try tables.replace(kept, with: entries)
                    if let store = host.currentStore {
                        for entry in entries where entry.table == Self.telegramKeysTable {
                            if let key = Self.storedKey(entry) { _ = try store.keyring.add(key, rebind: true) }
                        }
                    }
                    synced.run()
                } catch {
                    logger.error("applying the replicated service tables failed", metadata: ["error": "\(error)"])
                }
            })
    }

    /// A Telegram key as a replicated service entry: key the id, value the account, a NUL, and
    /// the key bytes.
    static func replicatedKey(_ key: StoredKey) -> ServiceEntry {
        ServiceEntry(table: telegramKeysTable, key: String(key.id), value: Array(key.account.utf8) + [0] + key.bytes)
    }

    static func storedKey(_ entry: ServiceEntry) -> StoredKey? {
        guard let id = Int64(entry.key), let nul = entry.value.firstIndex(of: 0) else { return nil }
        return StoredKey(id: id, account: String(decoding: entry.value[..<nul], as: UTF8.self), bytes: Array(entry.value[(nul + 1)...]))
    }
}

/// Refuses writes while the replicated log accepts none (a follower, a fenced node): 503
/// before anything is touched. Backups and compactions are local and stay allowed.
struct ReplicationGate<Context: RequestContext>: RouterMiddleware {
    let log: ReplicatedLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch request.method {
        case .get, .head, .options: return try await next(request, context)
        default: break
        }
        if request.uri.path == "/v1/admin/backup" || request.uri.path == "/v1/admin/compact" { return try await next(request, context) }
        switch log.status {
        case .following:
            throw ServerError(replication: ReplicationError(.follower, "this node follows log id \(log.logId) (--follow): it accepts no writes"))
        case .fenced(let reason):
            throw ServerError(replication: ReplicationError(.fenced, reason))
        default:
            return try await next(request, context)
        }
    }
}

/// What runs after the service tables were replaced from the replicated log's (the token
/// cache reloaded), set once the server has made it.
final class SyncHook: Sendable {
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    func set(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }

    func run() { action.withLock { $0 }?() }
}
