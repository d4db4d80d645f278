import HeraldEvents
import HeraldProjection

// The encodings of the audit index (`schema/log-format.md`, "The audit index"): two named
// databases beside the log that let an audit of one target, and a `state --at` of one
// account, read only what they need.
//
// - `auditTargets`: for each target an account's events changed (``AuditTargets``), the
//   first and last seq that changed it, in buckets of up to 128 targets of one kind (and one
//   chat) with neighbouring ids (``bucketKey(_:)``, ``encodeBucket(key:_:)``). Two targets
//   whose account or chat hashes collide share a bucket and, with equal ids, a window that
//   covers both, which an audit still reads correctly (it replays every event of the window).
// - `auditSeqs`: each account's seqs, in chunks written as the index catches up. Key: the
//   account's hash and the chunk's first seq (u64be each); value: CRC-32C (u32be) of the
//   rest, the account's name (varint length, UTF-8 bytes), the last seq of the account's
//   previous chunk (varint, 0 for its first), the count (varint) and the seqs after the first
//   as varint deltas. The previous-chunk link lets a reader tell a lost chunk.
extension AuditIndex {
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

    /// The account hash a key of either database starts with (u64be).
    static func hashPrefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0
        for i in 0..<8 { hash = hash << 8 | UInt64(key[i]) }
        return hash
    }

    /// Ids per bucket: a bucket's key is its id shifted right by this.
    static let bucketShift: UInt64 = 7

    /// Where one target's window lives: its account's hash, a tag byte (`o` an object of a
    /// chat, `c` a whole chat, `n` a notification, `g` a group), the hash of the chat (0 for a
    /// notification or a group), and the target's id (the object's, the notification's or
    /// the group's; 0 for a chat).
    static func slot(account: UInt64, _ key: AuditTargets.Key) -> AuditIndexKey {
        switch key {
        case .object(let chat, let objectId): AuditIndexKey(account: account, tag: UInt8(ascii: "o"), scope: fnv1a(chat.name.utf8), id: UInt64(bitPattern: objectId))
        case .chat(let chat): AuditIndexKey(account: account, tag: UInt8(ascii: "c"), scope: fnv1a(chat.name.utf8), id: 0)
        case .notification(let id): AuditIndexKey(account: account, tag: UInt8(ascii: "n"), scope: 0, id: UInt64(bitPattern: id))
        case .group(let id): AuditIndexKey(account: account, tag: UInt8(ascii: "g"), scope: 0, id: UInt64(bitPattern: id))
        }
    }

    /// The `auditTargets` key of the bucket holding `slot`: account hash (u64be), tag (u8),
    /// scope hash (u64be), `id >> bucketShift` (u64be): 25 bytes.
    static func bucketKey(_ slot: AuditIndexKey) -> [UInt8] {
        var writer = ByteWriter(capacity: 25)
        writer.uint64BigEndian(slot.account)
        writer.byte(slot.tag)
        writer.uint64BigEndian(slot.scope)
        writer.uint64BigEndian(slot.id >> bucketShift)
        return writer.bytes
    }

    /// An `auditTargets` value: a CRC-32C (u32be) of the key's bytes and the rest, the count
    /// (varint), then per target in ascending id: the id's difference from the previous one
    /// (the first: from the bucket's first id), `first` and `last − first` (varints).
    static func encodeBucket(key: [UInt8], _ entries: [(id: UInt64, first: UInt64, last: UInt64)]) -> [UInt8] {
        var body = ByteWriter(capacity: 4 + entries.count * 8)
        body.varint(UInt64(entries.count))
        var previous = bucketBase(key)
        for entry in entries {
            body.varint(entry.id - previous)
            body.varint(entry.first)
            body.varint(entry.last - entry.first)
            previous = entry.id
        }
        var writer = ByteWriter(capacity: body.bytes.count + 4)
        writer.uint32BigEndian(CRC32C.checksum(key + body.bytes))
        writer.append(contentsOf: body.bytes)
        return writer.bytes
    }

    /// The first id of the bucket `key` names.
    static func bucketBase(_ key: some Collection<UInt8>) -> UInt64 {
        key.suffix(8).reduce(0 as UInt64) { $0 << 8 | UInt64($1) } << bucketShift
    }

    /// Reads an `auditTargets` bucket; `nil` when damaged (checksum, lengths, order, an id
    /// outside the bucket, `first` 0 or after `last`): never trusted.
    static func decodeBucket(key: some Collection<UInt8>, value: UnsafeRawBufferPointer) -> [(id: UInt64, first: UInt64, last: UInt64)]? {
        guard key.count == 25, value.count > 4 else { return nil }
        var stored: UInt32 = 0
        for i in 0..<4 { stored = stored << 8 | UInt32(value[i]) }
        let body = UnsafeRawBufferPointer(rebasing: value[4...])
        guard CRC32C.checksum(Array(key) + Array(body)) == stored else { return nil }
        var reader = ByteReader(body)
        let base = bucketBase(key)
        do {
            let count = Int(try reader.varint())
            guard count >= 1, count <= 1 << bucketShift else { return nil }
            var entries: [(id: UInt64, first: UInt64, last: UInt64)] = []
            entries.reserveCapacity(count)
            var previous = base
            for index in 0..<count {
                let delta = try reader.varint()
                guard index == 0 || delta > 0 else { return nil }
                let (id, overflow) = previous.addingReportingOverflow(delta)
                let first = try reader.varint()
                let (last, overflowLast) = first.addingReportingOverflow(try reader.varint())
                guard !overflow, !overflowLast, id >> bucketShift == base >> bucketShift, first > 0 else { return nil }
                entries.append((id, first, last))
                previous = id
            }
            return reader.isAtEnd ? entries : nil
        } catch {
            return nil
        }
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
