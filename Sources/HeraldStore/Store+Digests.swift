import LMDB

extension Store {
    /// The `digests` database: the digest of every raw payload stored (``Source/digest``) →
    /// the seq of the first record made from it, so that a payload delivered again, by any
    /// later run, is known as a duplicate (`herald ingest`'s summary). Written in the same
    /// transaction as the records; created, and filled from the log and the archive, the
    /// first time a record with a digest is written.
    func digestIndex(creatingFor payloads: [[PendingRecord]]) throws -> Database? {
        guard payloads.contains(where: { $0.contains { $0.source.digest != nil } }) else { return nil }
        if let database = try existingAuxiliary(.digests) { return database }
        let database = try auxiliary(.digests)
        var found: [([UInt8], UInt64)] = []
        let collect = { (seq: UInt64, bytes: UnsafeRawBufferPointer, location: String) throws in
            if let digest = try Self.decodeRecord(seq: seq, bytes: bytes, in: location).source.digest { found.append((digest, seq)) }
        }
        if let archive = try archive() {
            try archive.forEachRawRecord { seq, bytes in try collect(seq, bytes, archive.path); return true }
        }
        try forEachRawRecord { seq, bytes in try collect(seq, bytes, path); return true }
        try environment.write { txn in
            for (digest, seq) in found {
                try digest.withUnsafeBytes { key in
                    try SeqKey(seq).withBytes { value in _ = try txn.insert(database, key: key, value: value) }
                }
            }
        }
        return database
    }

    /// Records the digests of `payloads` (stored under `seqs`) in the `digests` database,
    /// inside the caller's write transaction; a digest already there keeps its first seq.
    func indexDigests(_ payloads: [[PendingRecord]], seqs: [UInt64], in database: Database, _ txn: borrowing Transaction) throws {
        var index = 0
        var previous: [UInt8]? = nil
        for payload in payloads {
            for record in payload {
                defer { index += 1 }
                guard let digest = record.source.digest, digest != previous else { continue }
                previous = digest
                try digest.withUnsafeBytes { key in
                    try SeqKey(seqs[index]).withBytes { value in _ = try txn.insert(database, key: key, value: value) }
                }
            }
        }
    }

    /// Which of `digests` were stored before (by this run or any earlier one): their indexes
    /// in `digests`. Empty when no payload with a digest was ever stored.
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
