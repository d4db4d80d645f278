import ArgumentParser
import HeraldEvents
import Foundation
import HeraldStore

/// `herald compact`: move the log records a snapshot covers into the archive (or, when asked,
/// discard them) and reclaim the space.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Move log records covered by a snapshot into the archive and shrink the data file.",
        discussion: """
            The snapshot (default: the newest valid one) becomes the base: opening never
            needs the records below it. They move to DIR/archive/ first, where export,
            replay, state --at, audit and verify still read them: no history is lost.

            --discard-history drops them for good instead (and archived records up to the
            base with them): the snapshot then stands for the whole history before it, and
            audits and replays start there. It asks for confirmation on a terminal; scripts
            pass --yes. --dry-run prints what would be archived or dropped and changes nothing.

            The data file is then rewritten without free pages and swapped in atomically; an
            interrupted compaction leaves the old or the new file, both valid. Needs the
            writer lock; readers open during the swap keep the old file until they reopen.

            Example:
              herald snapshot --store ./herald.db
              herald compact --store ./herald.db --dry-run
              herald compact --store ./herald.db
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: .hidden)
    var archive = false

    @Flag(name: .long, help: "Drop the covered records (and archived ones up to the base) for good instead of archiving them.")
    var discardHistory = false

    @Flag(name: .long, help: "Print what would be archived, dropped and deleted; change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Do not ask for confirmation before discarding history.")
    var yes = false

    @Flag(name: .long, help: "Print the report (or, with --dry-run, the plan) as one JSON object.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Compact up to the snapshot at this seq.", valueName: "SEQ"))
    var at: UInt64?

    mutating func validate() throws {
        if archive && discardHistory { throw ValidationError("--archive and --discard-history contradict each other") }
    }

    func run() throws {
        if let at { try Self.checkSnapshot(at: at, in: store) }
        if dryRun || discardHistory {
            let plan = try StoreMaintenance(path: store.path).compact(through: at, discardingHistory: discardHistory, dryRun: true)
            if dryRun {
                Terminal.line(json ? Self.json(plan) : Self.describe(plan))
                return
            }
            guard plan.base > plan.previousBase else {
                Terminal.line("nothing to drop (base stays at seq \(plan.base))")
                return
            }
            try Terminal.confirm(
                "Discard seqs \(plan.previousBase + 1)…\(plan.base) for good (\(plan.recordsRemoved) log records"
                    + (plan.archivedRecordsDiscarded > 0 ? " and \(plan.archivedRecordsDiscarded) archived records" : "")
                    + ") from \(store.path)?",
                yes: yes)
        }
        let report = try StoreMaintenance(path: store.path).compact(through: at, discardingHistory: discardHistory)
        if json {
            Terminal.line(Self.json(report))
            return
        }
        var text: String
        if report.base == report.previousBase {
            text = "nothing to drop (base stays at seq \(report.base))"
        } else if discardHistory {
            text = "base moved from seq \(report.previousBase) to \(report.base): \(report.recordsRemoved) records discarded"
            if report.archivedRecordsDiscarded > 0 { text += " with \(report.archivedRecordsDiscarded) archived records" }
        } else {
            text = "base moved from seq \(report.previousBase) to \(report.base): \(report.recordsArchived) records archived"
        }
        text += "; data file \(report.bytesBefore) → \(report.bytesAfter) bytes"
        Terminal.line(text)
    }

    /// The report's JSON form.
    static func json(_ report: CompactionReport) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("dryRun"); writer.bool(report.dryRun)
        writer.key("historyDiscarded"); writer.bool(report.historyDiscarded)
        writer.key("previousBase"); writer.int(report.previousBase)
        writer.key("base"); writer.int(report.base)
        writer.key("recordsRemoved"); writer.int(report.recordsRemoved)
        writer.key("bytesRemoved"); writer.int(report.bytesRemoved)
        writer.key("recordsArchived"); writer.int(report.recordsArchived)
        writer.key("archivedRecordsDiscarded"); writer.int(report.archivedRecordsDiscarded)
        writer.key("snapshotsRemoved"); writer.ints(report.snapshotsRemoved)
        writer.key("bytesBefore"); writer.int(report.bytesBefore)
        writer.key("bytesAfter"); writer.int(report.bytesAfter)
        writer.objectEnd()
        return writer.string
    }

    /// What a dry run found, one line per effect.
    static func describe(_ plan: CompactionReport) -> String {
        guard let dropped = plan.droppedRange else {
            return "dry run: nothing to drop (base stays at seq \(plan.base)); the data file would be rewritten without free pages"
        }
        var lines = ["dry run: the base would move from seq \(plan.previousBase) to \(plan.base)"]
        let records = "\(plan.recordsRemoved) log records (seqs \(dropped.lowerBound)…\(dropped.upperBound), \(plan.bytesRemoved) bytes)"
        if plan.historyDiscarded {
            lines.append("  discarded for good: \(records)")
            if plan.archivedRecordsDiscarded > 0 {
                lines.append("  discarded for good: \(plan.archivedRecordsDiscarded) archived records up to seq \(plan.base)")
            }
            lines.append("  audits, replays and state --at would start at the snapshot at seq \(plan.base)")
        } else {
            lines.append("  moved into the archive: \(records)")
        }
        lines.append(
            "  snapshots deleted: "
                + (plan.snapshotsRemoved.isEmpty ? "none" : plan.snapshotsRemoved.map { "seq \($0)" }.joined(separator: ", ")))
        lines.append("  data file now \(plan.bytesBefore) bytes; it would be rewritten without free pages")
        return lines.joined(separator: "\n")
    }

    /// Refuses `--at` naming no snapshot as a usage error (exit 1), listing the seqs there
    /// are; a snapshot that is there but damaged is left for compaction to report (exit 2).
    static func checkSnapshot(at seq: UInt64, in store: StoreOptions) throws {
        let seqs = try store.openForReading { $0.replayOnOpen = false }.snapshots.seqs()
        guard !seqs.contains(seq) else { return }
        let available = seqs.isEmpty ? "it has none" : "it has " + seqs.sorted().map { "\($0)" }.joined(separator: ", ")
        throw CLIFailure(exitCode: CLIFailure.usage, "--at \(seq): no snapshot at that seq in \(store.path) (\(available))")
    }
}
