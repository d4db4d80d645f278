import HeraldEvents
import LMDB

/// A decryption key kept in the store (`herald keys add`), e.g. a Telegram auth key.
public struct StoredKey: Hashable, Sendable {
    /// The key's id (Telegram: the little-endian Int64 of SHA-1(key)[12..<20]).
    public var id: Int64
    /// The account it belongs to, or `""` for any.
    public var account: String
    /// The key bytes.
    public var bytes: [UInt8]

    /// Creates a stored key.
    public init(id: Int64, account: String, bytes: [UInt8]) {
        self.id = id
        self.account = account
        self.bytes = bytes
    }

    static let version: UInt8 = 1

    var encoded: [UInt8] {
        var writer = ByteWriter(capacity: bytes.count + 32)
        writer.byte(Self.version)
        writer.string(account)
        writer.varint(UInt64(bytes.count))
        writer.append(contentsOf: bytes)
        writer.uint32BigEndian(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    init(id: Int64, bytes value: UnsafeRawBufferPointer) throws {
        try LogRecord.verifyChecksum(value)
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: value[..<(value.count - 4)]))
        guard try reader.byte() == Self.version else { throw LogRecord.Damage(reason: "unknown key entry version") }
        self.id = id
        account = try reader.string()
        bytes = try reader.bytes(reader.count(limit: reader.remaining))
    }
}

extension Store {
    /// Stores (or replaces) a key.
    public func addKey(_ key: StoredKey) throws {
        let database = try auxiliary(.keys)
        try environment.storeWrite { txn in
            try txn.put(database, key: SeqKey(UInt64(bitPattern: key.id)).bytes, value: key.encoded)
        }
    }

    /// Stores `key` unless the store holds that key already: bound to the same account it
    /// changes nothing and returns false; bound to another (or to any account, `""`) it throws
    /// ``StoreError/keyBound(path:id:account:)`` unless `rebind`, since that account's
    /// encrypted pushes would become `key.account`'s. Checked and stored in one transaction.
    @discardableResult
    public func addKey(_ key: StoredKey, rebind: Bool) throws -> Bool {
        let database = try auxiliary(.keys)
        let id = SeqKey(UInt64(bitPattern: key.id)).bytes
        return try environment.storeWrite { txn in
            if let stored = try txn.get(database, key: id) {
                let existing: StoredKey
                do { existing = try stored.withUnsafeBytes { try StoredKey(id: key.id, bytes: $0) } } catch {
                    throw StoreError.damagedRecord(path: path, seq: 0, reason: "key \(key.id): \(error)")
                }
                if existing.account.isSameName(as: key.account) { return false }
                guard rebind else { throw StoreError.keyBound(path: path, id: key.id, account: existing.account) }
            }
            try txn.put(database, key: id, value: key.encoded)
            return true
        }
    }

    /// Every stored key, by id.
    public func keys() throws -> [StoredKey] {
        guard let database = try existingAuxiliary(.keys) else { return [] }
        return try environment.storeRead { txn in
            try txn.withCursor(database) { cursor in
                var keys: [StoredKey] = []
                var entry = try cursor.first()
                while let current = entry {
                    let id = Int64(bitPattern: SeqKey(bytes: current.key)?.seq ?? 0)
                    do {
                        keys.append(try StoredKey(id: id, bytes: current.value))
                    } catch {
                        throw StoreError.damagedRecord(path: path, seq: 0, reason: "key \(id): \(error)")
                    }
                    entry = try cursor.next()
                }
                return keys
            }
        }
    }

    /// Removes a key; returns whether it existed. Throws ``StoreError/readOnly(path:)`` on a
    /// read-only store.
    @discardableResult
    public func removeKey(id: Int64) throws -> Bool {
        try requireWritable()
        guard let database = try existingAuxiliary(.keys) else { return false }
        return try environment.storeWrite { txn in try txn.delete(database, key: SeqKey(UInt64(bitPattern: id)).bytes) }
    }
}
