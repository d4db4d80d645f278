/// What ``Store/verify(checkingSnapshots:progress:)`` found: every problem with the seq it concerns.
public struct VerifyReport: Sendable, Hashable, CustomStringConvertible {
    /// One problem.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// Where the problem lies.
        public enum Location: String, Sendable, Hashable {
            /// A log record.
            case log
            /// An archived record.
            case archive
            /// A snapshot.
            case snapshot
            /// The sequence of seqs: records missing without a recorded purge.
            case sequence
            /// The audit index (`auditTargets`, `auditSeqs`): derived data that differs from
            /// what the history gives; audits do not trust it, `herald index --rebuild`
            /// rebuilds it.
            case auditIndex
        }

        /// Where the problem lies.
        public var location: Location
        /// The seq concerned (for a run of missing seqs, the first).
        public var seq: UInt64
        /// What is wrong.
        public var message: String

        /// Creates a problem.
        package init(_ location: Location, seq: UInt64, _ message: String) {
            self.location = location
            self.seq = seq
            self.message = message
        }

        public var description: String { "\(location.rawValue) seq \(seq): \(message)" }
    }

    /// Every problem found, in the order found.
    public var problems: [Problem] = []
    /// What verify could not decide, in words (pages written after the newest commit, which
    /// may be a lost last commit); not problems, but worth a look.
    public var notes: [String] = []
    /// Log records whose checksum and encoding were checked.
    public var recordsChecked = 0
    /// Archived records checked.
    public var archivedRecordsChecked = 0
    /// Snapshots checked, and of those, compared with a replay.
    public var snapshotsChecked = 0
    /// Snapshots compared, byte for byte, with the replayed state at their seq.
    public var snapshotsCompared = 0
    /// The compaction base (0 when never compacted) and the highest seq given out.
    public var base: UInt64 = 0
    /// The highest seq given out.
    public var highWater: UInt64 = 0
    /// The seq ranges that purge removed on purpose.
    public var purged: [ClosedRange<UInt64>] = []

    /// Whether nothing is wrong.
    public var isClean: Bool { problems.isEmpty }

    /// Creates an empty report.
    package init() {}

    public var description: String {
        var text = "checked \(recordsChecked) log record\(recordsChecked == 1 ? "" : "s")"
        if archivedRecordsChecked > 0 { text += ", \(archivedRecordsChecked) archived" }
        text += ", \(snapshotsChecked) snapshot\(snapshotsChecked == 1 ? "" : "s") (\(snapshotsCompared) compared with a replay)"
        text += isClean ? ": no problems" : ": \(problems.count) problem\(problems.count == 1 ? "" : "s")"
        return text
    }
}
