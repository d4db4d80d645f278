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

extension Store {
    /// Keeps rejected payloads; returns the ids given to them. Runs in its own transaction:
    /// the quarantine never shares a commit with the log. See ``quarantineWithinLimit(_:)``.
    @discardableResult
    public func quarantine(_ entries: [QuarantinedPayload]) throws -> [UInt64] {
        try quarantineWithinLimit(entries).ids
    }

    /// Keeps rejected payloads, then, past ``Options/quarantineLimitBytes``, drops the oldest
    /// entries (never those just added) until the quarantine fits, in the same commit.
    /// Returns the ids given and the number of entries dropped.
    public func quarantineWithinLimit(_ entries: [QuarantinedPayload]) throws -> (ids: [UInt64], dropped: Int) {
        guard !entries.isEmpty else { return ([], 0) }
        let database = try auxiliary(.quarantine)
        let limit = options.quarantineLimitBytes
        return try environment.storeWrite { txn in
            // Past the newest entry and past every id ever given (`meta` `quarantined`), so
            // an id removed by a retry or a purge is never given again.
            let newest = try txn.withCursor(database) { cursor in
                try cursor.last().flatMap { SeqKey(bytes: $0.key)?.seq } ?? 0
            }
            let given = try Self.metaNumber(Self.quarantinedKey, txn, meta: databases.meta, path: path)
            var next = max(newest, given) + 1
            let first = next
            var ids: [UInt64] = []
            for entry in entries {
                try txn.put(database, key: SeqKey(next).bytes, value: entry.encoded, flags: .append)
                ids.append(next)
                next += 1
            }
            try txn.put(databases.meta, key: Self.quarantinedKey, value: Array(String(next - 1).utf8))
            var dropped = 0
            while let limit, try txn.bytes(database) > limit {
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

    /// The `meta` key holding the highest quarantine id given out, in ASCII decimal.
    static let quarantinedKey = Array("quarantined".utf8)

    /// Every quarantined payload, oldest first.
    public func quarantined() throws -> [QuarantinedPayload] {
        guard let database = try existingAuxiliary(.quarantine) else { return [] }
        return try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                var entries: [QuarantinedPayload] = []
                var entry = try cursor.first()
                while let current = entry {
                    let id = SeqKey(bytes: current.key)?.seq ?? 0
                    do {
                        entries.append(try QuarantinedPayload(id: id, bytes: current.value))
                    } catch {
                        throw StoreError.damagedRecord(path: path, seq: id, reason: "quarantine entry \(id): \(error)")
                    }
                    entry = try cursor.next()
                }
                return entries
            }
        }
    }

    /// Removes one quarantined payload (after a successful retry); returns whether it existed.
    /// Throws ``StoreError/readOnly(path:)`` on a read-only store.
    @discardableResult
    public func removeQuarantined(id: UInt64) throws -> Bool {
        try requireWritable()
        guard let database = try existingAuxiliary(.quarantine) else { return false }
        return try environment.storeWrite { txn in try txn.delete(database, key: SeqKey(id).bytes) }
    }
}
