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

/// The decryption keys a store keeps (its `keys` database): ``StoredKey``s by id, read by
/// ingest to decrypt encrypted pushes.
///
/// Reach it through ``Store/keyring``. It works on the store's environment and keeps the
/// store open while it is held; a write after ``Store/close()`` throws
/// ``StoreError/Code/closed``.
///
/// ```swift
/// let store = try Store(path: "/path/to/herald.db")
/// try store.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: key), rebind: false)
/// let keys = try store.keyring.all()
/// try store.keyring.remove(id: 7)
/// ```
public struct Keyring: Sendable {
    let databases: AuxiliaryDatabases

    var path: String { databases.path }

    /// Stores `key`, replacing the key of the same id whatever account it was bound to.
    ///
    /// - Parameter key: The key to store.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    public func add(_ key: StoredKey) throws {
        let database = try databases.open(.keys)
        try databases.environment.storeWrite { txn in
            try txn.put(database, key: SeqKey(UInt64(bitPattern: key.id)).bytes, value: key.encoded)
        }
    }

    /// Stores `key` unless the store holds that key already, checked and stored in one
    /// transaction.
    ///
    /// Bound to the same account, the stored key is left as it is. Bound to another account
    /// (or to any account, `""`), it is replaced only with `rebind`, since that account's
    /// encrypted pushes would become `key.account`'s.
    ///
    /// - Parameters:
    ///   - key: The key to store.
    ///   - rebind: Whether a key of the same id bound to another account may be replaced.
    /// - Returns: Whether the key was stored (false: the store held it for the same account).
    /// - Throws: ``StoreError`` with code ``StoreError/Code/keyBound`` (naming the account
    ///   the key is bound to) when it is bound elsewhere and `rebind` is false;
    ///   ``StoreError/Code/readOnly`` or ``StoreError/Code/closed`` when the store cannot be
    ///   written; ``StoreError/Code/damagedRecord`` when the stored key cannot be read.
    @discardableResult
    public func add(_ key: StoredKey, rebind: Bool) throws -> Bool {
        let database = try databases.open(.keys)
        let id = SeqKey(UInt64(bitPattern: key.id)).bytes
        return try databases.environment.storeWrite { txn in
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

    /// Every stored key, by id; empty when the store never kept one.
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/damagedRecord`` when a stored key
    ///   cannot be read.
    public func all() throws -> [StoredKey] {
        try databases.entries(of: .keys) { seq, value in
            let id = Int64(bitPattern: seq)
            do {
                return try StoredKey(id: id, bytes: value)
            } catch {
                throw StoreError.damagedRecord(path: path, seq: 0, reason: "key \(id): \(error)")
            }
        }
    }

    /// Removes a key.
    ///
    /// - Parameter id: The key's id.
    /// - Returns: Whether the store held it.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/readOnly`` or
    ///   ``StoreError/Code/closed`` when the store cannot be written.
    @discardableResult
    public func remove(id: Int64) throws -> Bool {
        try databases.remove(UInt64(bitPattern: id), from: .keys)
    }
}

extension Store {
    /// The decryption keys the store keeps (``Keyring``).
    public var keyring: Keyring { Keyring(databases: auxiliaryDatabases) }
}
