import HeraldEvents
import HeraldProjection

extension Store {
    /// Replays the log from its start into a fresh projection, calling `body` after each
    /// event with the record and what applying it produced, and returns the projection.
    ///
    /// This is how any point of history is rebuilt (`herald state --at`, `herald replay`,
    /// `herald audit`): `configuration` may override the view options for a what-if replay,
    /// which writes nothing. Stops after `through`, or when `body` returns false.
    public func replay(
        through: UInt64 = .max,
        configuration: Projection.Configuration = .init(),
        _ body: (LogRecord, Outcome, borrowing Projection) throws -> Bool = { _, _, _ in true }
    ) throws -> Projection {
        var projection = Projection(configuration: configuration)
        try forEachRecord(through: through) { record in
            let outcome = projection.apply(record.event, seq: record.seq)
            return try body(record, outcome, projection)
        }
        return projection
    }

    /// The seq of the last record recorded at or before `time` (milliseconds since the
    /// epoch), or `nil` when every record is later.
    public func lastSeq(recordedAtOrBefore time: Int64) throws -> UInt64? {
        var found: UInt64?
        try forEachRecord { record in
            guard record.recordedAt <= time else { return false }
            found = record.seq
            return true
        }
        return found
    }
}
