import Foundation
import HeraldEvents
import HeraldReplication
import LMDB

/// The service's own small tables, kept beside the store in `STORE/serve/` (an LMDB
/// environment of its own, so the store's format is unchanged): access tokens (hashed),
/// idempotency keys, Matrix pushkeys and Web Push subscriptions. Values are JSON documents;
/// `schema/serve-tables.md` describes them.
///
/// Every method blocks (a write waits for an fsync): call them from the ``StoreHost``'s
/// thread pool, never on an event loop.
final class ServiceTables: Sendable {
    enum Table: String, CaseIterable {
        /// SHA-256 (hex) of a token → ``AccessToken/Record``.
        case tokens
        /// `scope NUL key` → ``IdempotencyEntry``.
        case idempotency
        /// Matrix pushkey → ``Registration``.
        case pushkeys
        /// Web Push subscription token → ``WebPushSubscription``.
        case subscriptions
        /// Account → ``Fence``: its events are refused here (moving, or moved, elsewhere).
        case fences
    }

    /// The directory inside the store that holds the tables.
    static let directoryName = "serve"

    let environment: Environment
    private let databases: [String: Database]
    /// The replicated log the tables are written through to (`herald serve
    /// --replicated-log`), before each local write: see ``ReplicatedLog/writeService(put:remove:)``.
    let replication: ReplicatedLog?

    /// Opens (creating) the tables of the store at `storePath`.
    init(storePath: String, replication: ReplicatedLog? = nil) throws {
        self.replication = replication
        let path = storePath + "/" + Self.directoryName
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var options = Environment.Options()
        options.mapSize = 64 << 20
        environment = try Environment(path: path, options: options)
        var databases: [String: Database] = [:]
        for table in Table.allCases {
            databases[table.rawValue] = try environment.openDatabase(table.rawValue, create: true)
        }
        self.databases = databases
    }

    private func database(_ table: Table) -> Database { databases[table.rawValue]! }

    /// The value stored under `key`, decoded.
    func get<Value: ServiceDocument>(_ table: Table, _ key: String, as type: Value.Type) throws -> Value? {
        let bytes = try environment.read { txn in try txn.get(database(table), key: Array(key.utf8)) }
        guard let bytes else { return nil }
        return try Self.decode(Value.self, bytes, table: table, key: key)
    }

    /// Stores `value` under `key` (replacing), durably.
    func put(_ table: Table, _ key: String, _ value: some ServiceDocument) throws {
        let bytes = JSONValue.object(value.fields).bytes
        try replication?.writeService(put: [ServiceEntry(table: table.rawValue, key: key, value: bytes)])
        try environment.write { txn in try txn.put(database(table), key: Array(key.utf8), value: bytes) }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    func remove(_ table: Table, _ key: String) throws -> Bool {
        try replication?.writeService(put: [], remove: [(table.rawValue, key)])
        return try environment.write { txn in try txn.delete(database(table), key: Array(key.utf8)) }
    }

    /// Every entry of `table`, in key order.
    func all<Value: ServiceDocument>(_ table: Table, as type: Value.Type) throws -> [(key: String, value: Value)] {
        let raw: [([UInt8], [UInt8])] = try environment.read { txn in
            try txn.withCursor(database(table)) { cursor in
                var entries: [([UInt8], [UInt8])] = []
                var entry = try cursor.first()
                while let current = entry {
                    entries.append((Array(current.key), Array(current.value)))
                    entry = try cursor.next()
                }
                return entries
            }
        }
        return try raw.map {
            let key = String(decoding: $0.0, as: UTF8.self)
            return (key, try Self.decode(Value.self, $0.1, table: table, key: key))
        }
    }

    /// The document `bytes` stored under `key` in `table`, read with the tolerant reader.
    private static func decode<Value: ServiceDocument>(_ type: Value.Type, _ bytes: [UInt8], table: Table, key: String) throws -> Value {
        guard case .object(let fields)? = try? JSONParser.parse(bytes), let value = Value(fields) else {
            throw ServerError(.internalServerError, field: "serve/\(table.rawValue)", "the value of \(key) is damaged (schema/serve-tables.md)")
        }
        return value
    }

    /// Removes the entries of `table` whose value `isExpired` says so (undecodable ones stay),
    /// in one write; returns how many.
    func removeAll<Value: ServiceDocument>(_ table: Table, as type: Value.Type, where isExpired: (Value) -> Bool) throws -> Int {
        let expired = try all(table, as: type).filter { isExpired($0.value) }.map(\.key)
        guard !expired.isEmpty else { return 0 }
        try replication?.writeService(put: [], remove: expired.map { (table.rawValue, $0) })
        return try environment.write { txn in
            var removed = 0
            for key in expired where try txn.delete(database(table), key: Array(key.utf8)) { removed += 1 }
            return removed
        }
    }

    /// Every entry of every table, as the replicated log keeps them.
    func entries() throws -> [ServiceEntry] {
        try environment.read { txn in
            var entries: [ServiceEntry] = []
            for table in Table.allCases {
                try txn.withCursor(database(table)) { cursor in
                    var entry = try cursor.first()
                    while let current = entry {
                        entries.append(
                            ServiceEntry(table: table.rawValue, key: String(decoding: current.key, as: UTF8.self), value: Array(current.value)))
                        entry = try cursor.next()
                    }
                }
            }
            return entries
        }
    }

    /// Replaces the local tables named in `tables` with `entries` (the replicated log's), in
    /// one write; entries of other tables are ignored.
    func replace(_ tables: [Table], with entries: [ServiceEntry]) throws {
        let names = Set(tables.map(\.rawValue))
        try environment.write { txn in
            for table in tables { try txn.removeAll(database(table)) }
            for entry in entries where names.contains(entry.table) {
                try txn.put(databases[entry.table]!, key: Array(entry.key.utf8), value: entry.value)
            }
        }
    }

    /// How many entries `table` holds.
    func count(_ table: Table) throws -> Int {
        try environment.read { txn in try txn.count(database(table)) }
    }
}

/// A value of the service tables: a JSON object of the fields `schema/serve-tables.md`
/// lists, read with the tolerant ``JSONParser`` (so members it does not know are skipped and
/// the documents earlier versions wrote read the same) and written with ``JSONWriter``, keys
/// sorted.
protocol ServiceDocument {
    /// The value of the object `fields`; `nil` when a member it needs is missing or not of
    /// its type.
    init?(_ fields: [String: JSONValue])
    /// The object's members; an optional field that is `nil` is left out.
    var fields: [String: JSONValue] { get }
}

/// An account whose appends an instance refuses: it is being moved, or was moved, to
/// another instance (`herald move-account`).
struct Fence: ServiceDocument, Sendable, Hashable {
    /// Where it went, as the mover named it (a URL), when known.
    var movedTo: String?
    /// Milliseconds since the epoch.
    var since: Int64

    init(movedTo: String?, since: Int64) {
        self.movedTo = movedTo
        self.since = since
    }

    init?(_ fields: [String: JSONValue]) {
        guard let since = fields["since"]?.integer else { return nil }
        self.init(movedTo: fields["movedTo"]?.string, since: since)
    }

    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["since": .int(since)]
        if let movedTo { fields["movedTo"] = .string(movedTo) }
        return fields
    }
}

/// What a Matrix pushkey or a subscription is registered to.
struct Registration: ServiceDocument, Sendable, Hashable {
    var account: String
    /// The Matrix `app_id` the pushkey was registered with, when given.
    var appId: String?

    init(account: String, appId: String?) {
        self.account = account
        self.appId = appId
    }

    init?(_ fields: [String: JSONValue]) {
        guard let account = fields["account"]?.string else { return nil }
        self.init(account: account, appId: fields["appId"]?.string)
    }

    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["account": .string(account)]
        if let appId { fields["appId"] = .string(appId) }
        return fields
    }
}
