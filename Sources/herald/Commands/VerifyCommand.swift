import ArgumentParser
import HeraldEvents
import Foundation
import HeraldStore

/// `herald verify`: check every record, archived record and snapshot.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record and snapshot: checksums, seq contiguity, snapshots against a replay.",
        discussion: """
            Lists each problem with its seq and exits 2 if there is any. Purged seqs and
            the records compaction dropped are not problems. Opens the store read-only and
            without replaying it, so a damaged store can be verified.

            Example:
              herald verify --store ./herald.db
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(
        name: .long,
        help: """
            Skip the snapshots: check neither their checksums nor them against the replay. A \
            store compacted without an archive has no log before its base snapshot: there the \
            replay still starts from that snapshot, and reports it if it is damaged.
            """)
    var noSnapshots = false

    @Flag(name: .long, help: "Print the report as one JSON object (schema/verify.schema.json).")
    var json = false

    static func json(_ report: VerifyReport) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("clean"); writer.bool(report.isClean)
        writer.key("recordsChecked"); writer.int(report.recordsChecked)
        writer.key("archivedRecordsChecked"); writer.int(report.archivedRecordsChecked)
        writer.key("snapshotsChecked"); writer.int(report.snapshotsChecked)
        writer.key("snapshotsCompared"); writer.int(report.snapshotsCompared)
        writer.key("base"); writer.int(report.base)
        writer.key("lastSeq"); writer.int(report.highWater)
        writer.key("purged"); writer.ranges(report.purged)
        writer.key("problems")
        writer.arrayStart()
        for problem in report.problems {
            writer.objectStart()
            writer.key("location"); writer.string(problem.location.rawValue)
            writer.key("seq"); writer.int(problem.seq)
            writer.key("message"); writer.string(problem.message)
            writer.objectEnd()
        }
        writer.arrayEnd()
        writer.key("notes")
        writer.arrayStart()
        for note in report.notes { writer.string(note) }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }

    func run() throws {
        let bar = ProgressBar(enabled: Terminal.stderrIsTTY, label: "verify")
        // Read-only, without a replay, the file's pages walked afresh (it checks the file itself).
        let report = try StoreMaintenance(path: store.path).verify(checkingSnapshots: !noSnapshots) { seq, last in
            bar.update("seq \(seq) of \(last)", fraction: last == 0 ? nil : Double(seq) / Double(last))
        }
        bar.finish()
        if json {
            Terminal.line(Self.json(report))
        } else {
            for problem in report.problems { Terminal.line(problem.description) }
            for note in report.notes { Terminal.note(note) }
            Terminal.line(report.description)
        }
        if !report.isClean { throw ExitCode(CLIFailure.dataProblem) }
    }
}
