import LMDB

extension Store {
    /// The `meta` key of the last seq whose payload digest is in `digests`.
    static let digestsThroughKey = Array("digestsThrough".utf8)
    /// Records indexed per write transaction when the index catches up.
    static let digestChunk = 262_144

    /// Brings the `digests` database (payload digest → the seq of the first record stored
    /// from it) up to the last committed record, so that ``storedPayloads(among:)`` knows
    /// every payload stored before, by any run. Returns the last seq indexed.
    ///
    /// The index is kept beside the log, not in the append's own transaction: digests are
    /// random keys, and inserting each batch's into the tree as it commits dirtied most of
    /// the tree's pages at every commit (ingest ran at half its speed). Catching up inserts
    /// the digests sorted, a chunk of records per transaction, so each page of the tree is
    /// written about once per chunk; `herald ingest` catches up when it starts, every few
    /// batches, and when it ends. Records at or below `meta` `digestsThrough` are indexed;
    /// the first catch-up of a store indexes its whole history (log and archive).
    @discardableResult
    public func catchUpDigestIndex() throws -> UInt64 {
        try requireWritable()
        let database = try auxiliary(.digests)
        var through = try environment.read { txn in try Self.metaNumber(Self.digestsThroughKey, txn, meta: databases.meta, path: path) }
        let last = try committedLastSeq()
        while through < last {
            // Digests as two big-endian words: sorting them costs no reference counting, and
            // their order is the bytes' order, the order of LMDB's keys.
            var found: [(high: UInt64, low: UInt64, seq: UInt64)] = []
            var chunkEnd = through
            try forEachRecord(includingArchive: true, from: through + 1, through: last) { record in
                if let digest = record.source.digest, digest.count == 16 {
                    let high = digest[0..<8].reduce(0 as UInt64) { $0 << 8 | UInt64($1) }
                    let low = digest[8..<16].reduce(0 as UInt64) { $0 << 8 | UInt64($1) }
                    found.append((high, low, record.seq))
                }
                chunkEnd = record.seq
                return found.count < Self.digestChunk
            }
            if chunkEnd == through { chunkEnd = last }  // nothing left to read (purged tail)
            found.sort { ($0.high, $0.low) < ($1.high, $1.low) }
            let end = chunkEnd
            try environment.write { txn in
                for entry in found {
                    var key = (entry.high.bigEndian, entry.low.bigEndian)
                    try withUnsafeBytes(of: &key) { key in
                        try SeqKey(entry.seq).withBytes { value in _ = try txn.insert(database, key: key, value: value) }
                    }
                }
                try txn.put(databases.meta, key: Self.digestsThroughKey, value: Array(String(end).utf8))
            }
            through = end
        }
        return through
    }

    /// Which of `digests` were stored before, as far as the index knows (see
    /// ``catchUpDigestIndex()``): their indexes in `digests`. Empty when nothing is indexed.
    public func storedPayloads(among digests: [[UInt8]]) throws -> Set<Int> {
        guard !digests.isEmpty, let database = try existingAuxiliary(.digests) else { return [] }
        return try environment.read { txn in
            var found = Set<Int>()
            for (index, digest) in digests.enumerated() {
                if try digest.withUnsafeBytes({ try txn.get(database, key: $0) }) != nil { found.insert(index) }
            }
            return found
        }
    }

    /// Removes the digests of purged records whose payloads no kept record came from.
    func removeDigests(_ digests: Set<[UInt8]>) throws {
        guard !digests.isEmpty, let database = try existingAuxiliary(.digests) else { return }
        try environment.write { txn in
            for digest in digests { try txn.delete(database, key: digest) }
        }
    }
}
