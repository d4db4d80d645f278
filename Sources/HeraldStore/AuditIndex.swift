import HeraldEvents
import HeraldProjection

/// The encodings of the audit index (`schema/log-format.md`, "The audit index"): two named
/// databases beside the log that let an audit of one target, and a `state --at` of one
/// account, read only what they need.
///
/// - `auditTargets`: for each target an account's events changed (``AuditTargets``), the
///   first and last seq that changed it. Key: 16 bytes, the FNV-1a hash of the account's name
///   then the hash of the target; value: 20 bytes, `first` and `last` (u64be) and a CRC-32C
///   of key and both seqs. Two targets with one hash share a window that covers both, which
///   an audit still reads correctly (it replays every event of the window).
/// - `auditSeqs`: each account's seqs, in chunks written as the index catches up. Key: the
///   account's hash and the chunk's first seq (u64be each); value: CRC-32C (u32be) of the
///   rest, the account's name (varint length, UTF-8 bytes), the last seq of the account's
///   previous chunk (varint, 0 for its first), the count (varint) and the seqs after the first
///   as varint deltas. The previous-chunk link lets a reader tell a lost chunk.
enum AuditIndex {
    /// 64-bit FNV-1a, continuing from `hash`.
    static func fnv1a(_ bytes: some Sequence<UInt8>, _ hash: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = hash
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The hash of an account's name (its UTF-8 bytes), the first eight bytes of its keys.
    static func accountHash(_ account: String) -> UInt64 { fnv1a(account.utf8) }

    /// The hash of one target inside its account: a tag byte (`o`, `c`, `n`, `g`), then the
    /// chat's bytes and a NUL for an object or a chat, then the id (u64be) for an object, a
    /// notification or a group.
    static func targetHash(_ key: AuditTargets.Key) -> UInt64 {
        func id(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: UInt64(bitPattern: value).bigEndian, Array.init) }
        switch key {
        case .object(let chat, let objectId): return fnv1a(id(objectId), fnv1a(chat.name.utf8 + [0], fnv1a(CollectionOfOne(UInt8(ascii: "o")))))
        case .chat(let chat): return fnv1a(chat.name.utf8 + [0], fnv1a(CollectionOfOne(UInt8(ascii: "c"))))
        case .notification(let value): return fnv1a(id(value), fnv1a(CollectionOfOne(UInt8(ascii: "n"))))
        case .group(let value): return fnv1a(id(value), fnv1a(CollectionOfOne(UInt8(ascii: "g"))))
        }
    }

    /// The `auditTargets` key of `target` in `account` (account hash, target hash).
    static func targetKey(accountHash: UInt64, targetHash: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.uint64BigEndian(accountHash)
        writer.uint64BigEndian(targetHash)
        return writer.bytes
    }

    /// An `auditTargets` value.
    static func window(key: [UInt8], first: UInt64, last: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 20)
        writer.uint64BigEndian(first)
        writer.uint64BigEndian(last)
        writer.uint32BigEndian(CRC32C.checksum(key + writer.bytes))
        return writer.bytes
    }

    /// Reads an `auditTargets` value; `nil` when it is not 20 bytes, fails its checksum or
    /// has `first > last`: a damaged entry, never trusted.
    static func window(key: some Collection<UInt8>, value: UnsafeRawBufferPointer) -> (first: UInt64, last: UInt64)? {
        guard value.count == 20 else { return nil }
        var first: UInt64 = 0
        var last: UInt64 = 0
        var stored: UInt32 = 0
        for i in 0..<8 { first = first << 8 | UInt64(value[i]) }
        for i in 8..<16 { last = last << 8 | UInt64(value[i]) }
        for i in 16..<20 { stored = stored << 8 | UInt32(value[i]) }
        guard CRC32C.checksum(Array(key) + Array(value[0..<16])) == stored, first > 0, first <= last else { return nil }
        return (first, last)
    }

    /// The `auditSeqs` key of the chunk of `account` starting at `first`.
    static func seqsKey(accountHash: UInt64, first: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.uint64BigEndian(accountHash)
        writer.uint64BigEndian(first)
        return writer.bytes
    }

    /// One chunk of an account's seqs.
    struct SeqChunk: Equatable {
        var account: [UInt8]
        /// The last seq of the account's previous chunk; 0 for its first.
        var previousLast: UInt64
        /// Ascending, non-empty.
        var seqs: [UInt64]
    }

    /// An `auditSeqs` value.
    static func encode(_ chunk: SeqChunk) -> [UInt8] {
        var body = ByteWriter(capacity: 16 + chunk.account.count + chunk.seqs.count * 2)
        body.varint(UInt64(chunk.account.count))
        body.append(contentsOf: chunk.account)
        body.varint(chunk.previousLast)
        body.varint(UInt64(chunk.seqs.count))
        var previous = chunk.seqs[0]
        for seq in chunk.seqs.dropFirst() {
            body.varint(seq - previous)
            previous = seq
        }
        var writer = ByteWriter(capacity: body.bytes.count + 4)
        writer.uint32BigEndian(CRC32C.checksum(body.bytes))
        writer.append(contentsOf: body.bytes)
        return writer.bytes
    }

    /// Reads an `auditSeqs` entry; `nil` when damaged (checksum, key, lengths, order).
    static func decodeChunk(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> SeqChunk? {
        guard key.count == 16, value.count > 4 else { return nil }
        var stored: UInt32 = 0
        for i in 0..<4 { stored = stored << 8 | UInt32(value[i]) }
        let body = UnsafeRawBufferPointer(rebasing: value[4...])
        guard CRC32C.checksum(body) == stored else { return nil }
        var hash: UInt64 = 0
        var first: UInt64 = 0
        for i in 0..<8 { hash = hash << 8 | UInt64(key[i]) }
        for i in 8..<16 { first = first << 8 | UInt64(key[i]) }
        var reader = ByteReader(body)
        do {
            let nameLength = Int(try reader.varint())
            guard nameLength <= body.count else { return nil }
            var account: [UInt8] = []
            account.reserveCapacity(nameLength)
            for _ in 0..<nameLength { account.append(try reader.byte()) }
            let previousLast = try reader.varint()
            let count = Int(try reader.varint())
            guard count >= 1, count <= body.count, previousLast < first else { return nil }
            var seqs = [first]
            seqs.reserveCapacity(count)
            for _ in 1..<count {
                let delta = try reader.varint()
                guard delta > 0 else { return nil }
                seqs.append(seqs[seqs.count - 1] + delta)
            }
            guard reader.isAtEnd, fnv1a(account) == hash else { return nil }
            return SeqChunk(account: account, previousLast: previousLast, seqs: seqs)
        } catch {
            return nil
        }
    }
}
