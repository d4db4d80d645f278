/// Where a store's commits go before its own log, when its log is replicated elsewhere
/// (`herald serve --replicated-log`, the HeraldReplication module): ``Store/Options/replication``.
///
/// The store calls ``commit(_:)`` on its commit thread, once per group commit, with the
/// records exactly as its LMDB log stores them, before the LMDB transaction: what it throws
/// fails the whole commit, and nothing of it reaches LMDB. Records the store got from the
/// replicated log itself (``Store/appendReplicated(_:)``) are left out.
package protocol LogReplication: Sendable {
    /// Makes `records` durable in the replicated log, or throws; blocks until then.
    func commit(_ records: ReplicatedRecords) throws
}

/// The records of one commit: each seq with its value bytes (`schema/log-format.md`).
package struct ReplicatedRecords: Sendable {
    /// The seqs, increasing.
    package var seqs: [UInt64]
    /// Every record's value bytes, one after the other.
    package var bytes: [UInt8]
    /// Where each record's bytes end in ``bytes``.
    package var ends: [Int]

    package init(seqs: [UInt64], bytes: [UInt8], ends: [Int]) {
        precondition(seqs.count == ends.count, "one end per seq")
        self.seqs = seqs
        self.bytes = bytes
        self.ends = ends
    }

    /// How many records.
    package var count: Int { seqs.count }

    /// The bytes of the `index`th record.
    package func record(_ index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }
}
