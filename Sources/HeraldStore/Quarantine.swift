import HeraldEvents
import LMDB
import Logging

/// A payload that ingest rejected, kept with the reason so it can be fixed and retried.
public struct QuarantinedPayload: Hashable, Sendable {
    /// The quarantine id: 1, 2, 3… in the order of rejection.
    public var id: UInt64
    /// When it was rejected, milliseconds since the Unix epoch.
    public var receivedAt: Int64
    /// The format it was read as.
    public var format: String
    /// Where it came from: a file name or `-`, and the line (0 when unknown).
    public var input: String
    public var line: Int
    /// Why it was rejected.
    public var reason: String
    /// The account ingest was told the payload belongs to (`--account`), for payloads that
    /// do not name one (encrypted pushes); a retry uses it, and a purge of the account
    /// removes the entry. `nil` when none was given.
    public var account: String?
    /// The payload's bytes, exactly as received.
    public var raw: [UInt8]

    /// Creates an entry (the id is assigned when it is stored).
    public init(
        id: UInt64 = 0, receivedAt: Int64, format: String, input: String, line: Int, reason: String,
        account: String? = nil, raw: [UInt8]
    ) {
        self.id = id
        self.receivedAt = receivedAt
        self.format = format
        self.input = input
        self.line = line
        self.reason = reason
        self.account = account
        self.raw = raw
    }

    /// The entry version written: 2 adds the account. Version 1 entries still read.
    static let version: UInt8 = 2

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: raw.count + 64)
        writer.byte(Self.version)
        writer.varint(UInt64(bitPattern: receivedAt))
        writer.string(format)
        writer.varint(UInt64(line))
        writer.string(input)
        writer.string(reason)
        writer.string(account ?? "")
        writer.varint(UInt64(raw.count))
        writer.append(contentsOf: raw)
        writer.uint32BigEndian(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    init(id: UInt64, bytes: UnsafeRawBufferPointer) throws {
        try LogRecord.verifyChecksum(bytes)
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)]))
        let version = try reader.byte()
        guard version == 1 || version == Self.version else { throw LogRecord.Damage(reason: "unknown quarantine entry version \(version)") }
        self.id = id
        receivedAt = Int64(bitPattern: try reader.varint())
        format = try reader.string()
        line = try reader.count(limit: Int.max)
        input = try reader.string()
        reason = try reader.string()
        let account = version >= 2 ? try reader.string() : ""
        self.account = account.isEmpty ? nil : account
        raw = try reader.bytes(reader.count(limit: reader.remaining))
    }
}

/// The payloads ingest rejected (the store's `quarantine` database): ``QuarantinedPayload``s
/// by id, oldest first, kept with the reason so that they can be fixed and retried
/// (`herald quarantine`).
///
/// Reach it through ``Store/quarantine``. It works on the store's environment and keeps the
/// store open while it is held; a write after ``Store/close()`` throws
/// ``StoreError/Code/closed``. Each write
/// runs in its own transaction: the quarantine never shares a commit with the log.
///
/// ```swift
/// let store = try Store(path: "/path/to/herald.db")
/// let ids = try store.quarantine.add([
///     QuarantinedPayload(receivedAt: 1_754_385_290_000, format: "fcm", input: "-", line: 1,
///                        reason: "missing field `title`", raw: Array(payload.utf8))
/// ])
/// for entry in try store.quarantine.all() { print(entry.id, entry.reason) }
/// try store.quarantine.remove(id: ids[0])
/// ```
public struct Quarantine: Sendable {
    let databases: AuxiliaryDatabases
    /// ``Store/Options/quarantineLimitBytes``.
    let limitBytes: Int?
    let logger: Logger

    var path: String { databases.path }

    /// The `meta` key holding the highest quarantine id given out, in ASCII decimal.
    static let givenKey = Array("quarantined".utf8)

    /// Keeps rejected payloads, dropping the oldest entries past the limit as
    /// ``addWithinLimit(_:)`` does.
    ///
    /// - Parameter entries: The payloads; their ids are ignored.
    /// - Returns: The ids given to them, in order.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    @discardableResult
    public func add(_ entries: [QuarantinedPayload]) throws -> [UInt64] {
        try addWithinLimit(entries).ids
    }

    /// Keeps rejected payloads, then, past ``Store/Options/quarantineLimitBytes``, drops the
    /// oldest entries (never those just added) until the quarantine fits, in the same commit.
    ///
    /// Ids are 1, 2, 3… in the order of rejection, and never given twice, even after the
    /// entry that had one was removed.
    ///
    /// - Parameter entries: The payloads; their ids are ignored.
    /// - Returns: The ids given to them, and the number of older entries dropped.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    public func addWithinLimit(_ entries: [QuarantinedPayload]) throws -> (ids: [UInt64], dropped: Int) {
        guard !entries.isEmpty else { return ([], 0) }
        let database = try databases.open(.quarantine)
        let meta = databases.meta
        return try databases.environment.storeWrite { txn in
            // Past the newest entry and past every id ever given (`meta` `quarantined`), so
            // an id removed by a retry or a purge is never given again.
            let newest = try txn.withCursor(database) { cursor in
                try cursor.last().flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0
            }
            let given = try Store.metaNumber(Self.givenKey, txn, meta: meta, path: path)
            var next = max(newest, given) + 1
            let first = next
            var ids: [UInt64] = []
            for entry in entries {
                try txn.put(database, key: SeqKey(next).bytes, value: entry.encoded, flags: .append)
                ids.append(next)
                next += 1
            }
            try txn.put(meta, key: Self.givenKey, value: Array(String(next - 1).utf8))
            var dropped = 0
            while let limitBytes, try txn.bytes(database) > limitBytes {
                let oldest = try txn.withCursor(database) { cursor in try cursor.first().flatMap { SeqKey(bytes: $0.key)?.seq } }
                guard let oldest, oldest < first else { break }
                _ = try txn.delete(database, key: SeqKey(oldest).bytes)
                dropped += 1
            }
            if dropped > 0 {
                logger.warning("quarantine over its limit: oldest entries dropped", metadata: ["dropped": "\(dropped)", "path": "\(path)"])
            }
            return (ids, dropped)
        }
    }

    /// Every quarantined payload, oldest first; empty when the store never kept one.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/damagedRecord`` (the seq is the
    ///   entry's id) when an entry cannot be read.
    public func all() throws -> [QuarantinedPayload] {
        try databases.entries(of: .quarantine) { id, value in
            do {
                return try QuarantinedPayload(id: id, bytes: value)
            } catch {
                throw StoreError.damagedRecord(path: path, seq: id, reason: "quarantine entry \(id): \(error)")
            }
        }
    }

    /// Removes one quarantined payload, after a successful retry.
    ///
    /// - Parameter id: The entry's id.
    /// - Returns: Whether the quarantine held it.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    @discardableResult
    public func remove(id: UInt64) throws -> Bool {
        try databases.remove(id, from: .quarantine)
    }
}

extension Store {
    /// The payloads ingest rejected (``Quarantine``).
    public var quarantine: Quarantine {
        Quarantine(databases: auxiliaryDatabases, limitBytes: options.quarantineLimitBytes, logger: logger)
    }
}
