import HeraldEvents
import HeraldProjection

extension Store {
    /// Replays history into a fresh projection, calling `body` after each event with the
    /// record and what applying it produced, and returns the projection.
    ///
    /// This is how any point of history is rebuilt (`herald state --at`, `herald replay`):
    /// `configuration` may override the view options for a what-if replay, which writes
    /// nothing. Records moved to the archive by compaction are replayed first. When compaction
    /// dropped history without an archive, the replay starts from the base snapshot (and
    /// `through` must not be below it). Stops after `through`, or when `body` returns false.
    public func replay(
        through: UInt64 = .max,
        configuration: Projection.Configuration = .init(),
        _ body: (LogRecord, Outcome, borrowing Projection) throws -> Bool = { _, _, _ in true }
    ) throws -> Projection {
        try replay(through: through, configuration: configuration, rewriting: nil, body)
    }

    /// ``replay(through:configuration:_:)`` applying, for a what-if replay, the event
    /// `rewrite` gives instead of each logged one (`herald replay --set mutedUntil=…`);
    /// `body` still gets the record as logged. `nil` applies the logged events.
    public func replay(
        through: UInt64 = .max,
        configuration: Projection.Configuration = .init(),
        rewriting rewrite: ((Event) -> Event)?,
        _ body: (LogRecord, Outcome, borrowing Projection) throws -> Bool
    ) throws -> Projection {
        let (start, initial) = try replayStart(through: through, configuration: configuration, fromSnapshot: false)
        var projection = initial
        try history.forEach(from: start + 1, through: through) { record in
            let outcome = projection.apply(rewrite.map { $0(record.event) } ?? record.event, seq: record.seq)
            return try body(record, outcome, projection)
        }
        return projection
    }

    /// The projection right after event `seq`: from the newest valid snapshot at or before
    /// it (unless `useSnapshots` is false), then the records up to `seq`. A store compacted
    /// without an archive has no records before its base snapshot: without snapshots it
    /// starts from that one, and `seq` must not be below it.
    public func projection(at seq: UInt64, useSnapshots: Bool = true) throws -> Projection {
        let (start, initial) = try replayStart(through: seq, configuration: options.projection, fromSnapshot: useSnapshots)
        var projection = initial
        try forEachHistoryBatch(after: start, through: seq) { projection.replay($0) }
        projection.settleView()
        return projection
    }

    /// ``projection(at:useSnapshots:)`` for one account: the same start, then only
    /// `account`'s records up to `seq` are decoded and applied (every record is still
    /// checked), since accounts never influence each other. The projection holds that account
    /// alone (none when no record up to `seq` names it), as the full replay holds it, and its
    /// `Projection.seq` is the full replay's. `herald state --at SEQ --account A`.
    ///
    /// When the audit index covers the log (``AuditIndex/catchUp(starting:)``), the snapshot is restored
    /// for the account alone and only the account's records after it are read.
    public func projection(at seq: UInt64, account: String, useSnapshots: Bool = true) throws -> Projection {
        if useSnapshots, let projection = try auditIndex.projection(at: seq, account: account) { return projection }
        let (start, initial) = try replayStart(through: seq, configuration: options.projection, fromSnapshot: useSnapshots)
        var projection = initial
        try history.forEachRecordOrSkip(includingArchive: true, from: start + 1, through: seq, account: account) { seq, record in
            if let record { projection.replay(record.event, seq: record.seq) } else { projection.advance(to: seq) }
            return true
        }
        for name in projection.accounts where !name.isSameName(as: account) { projection.removeAccount(name) }
        projection.settleView()
        return projection
    }

    /// Where a replay through `through` can start: seq 0 with an empty projection when the
    /// whole history is readable, else (or when asked and possible) a snapshot.
    func replayStart(
        through: UInt64, configuration: Projection.Configuration, fromSnapshot: Bool
    ) throws -> (UInt64, Projection) {
        let history = try self.history.facts()
        if fromSnapshot, configuration == options.projection, snapshotsFitConfiguration,
            let found = try newestValidSnapshot(in: 0...through)
        {
            return (found.seq, found.projection)
        }
        if history.isComplete { return (0, Projection(configuration: configuration)) }
        guard through >= history.origin else {
            let exported = try exportedRanges()
            guard exported.isEmpty else {
                throw StoreError.historyExported(
                    path: path, origin: history.origin, files: exported.map { $0.directory + "/" + $0.file })
            }
            throw StoreError.historyCompacted(path: path, base: history.origin)
        }
        switch try loadSnapshot(seq: history.origin) {
        case .success(let restored):
            guard configuration != restored.configuration else { return (history.origin, restored) }
            do {
                return (history.origin, try Projection(snapshot: restored.snapshot(), configuration: configuration))
            } catch {
                throw StoreError.damagedSnapshot(path: path, seq: history.origin, reason: "\(error)")
            }
        case .failure(let damage):
            throw StoreError.damagedSnapshot(path: path, seq: history.origin, reason: damage.reason)
        }
    }
}
