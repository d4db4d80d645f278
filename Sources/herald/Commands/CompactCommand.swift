import ArgumentParser
import Foundation
import HeraldStore

/// `herald compact`: drop the log records a snapshot covers and reclaim the space.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Drop log records covered by a snapshot (optionally archiving them) and shrink the data file.",
        discussion: """
            The snapshot (default: the newest valid one) becomes the base: opening never
            needs the records below it. With --archive they move to DIR/archive/ first,
            where replay and audit still read them. The data file is then rewritten
            without free pages and swapped in atomically; an interrupted compaction leaves
            the old or the new file, both valid. Needs the writer lock; readers open
            during the swap keep the old file until they reopen.

            Example:
              herald snapshot --store ./herald.db
              herald compact --store ./herald.db --archive
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Move the dropped records into DIR/archive/ instead of deleting them.")
    var archive = false

    @Option(name: .long, help: ArgumentHelp("Compact up to the snapshot at this seq.", valueName: "SEQ"))
    var at: UInt64?

    func run() throws {
        if let at { try Self.checkSnapshot(at: at, in: store) }
        let report = try Store.compact(path: store.path, through: at, archive: archive)
        var text = report.base == report.previousBase
            ? "nothing to drop (base stays at seq \(report.base))"
            : "base moved from seq \(report.previousBase) to \(report.base): \(report.recordsRemoved) records dropped"
        if archive && report.recordsArchived > 0 { text += ", \(report.recordsArchived) archived" }
        text += "; data file \(report.bytesBefore) → \(report.bytesAfter) bytes"
        Terminal.line(text)
    }

    /// Refuses `--at` naming no snapshot as a usage error (exit 1), listing the seqs there
    /// are; a snapshot that is there but damaged is left for compaction to report (exit 2).
    static func checkSnapshot(at seq: UInt64, in store: StoreOptions) throws {
        let seqs = try store.openForReading { $0.replayOnOpen = false }.snapshotSeqs()
        guard !seqs.contains(seq) else { return }
        let available = seqs.isEmpty ? "it has none" : "it has " + seqs.sorted().map { "\($0)" }.joined(separator: ", ")
        throw CLIFailure(exitCode: CLIFailure.usage, "--at \(seq): no snapshot at that seq in \(store.path) (\(available))")
    }
}
