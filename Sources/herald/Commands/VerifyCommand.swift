import ArgumentParser
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

    func run() throws {
        let target = try store.openForReading { options in options.replayOnOpen = false }
        let report = try target.verify(checkingSnapshots: !noSnapshots)
        for problem in report.problems { Terminal.line(problem.description) }
        for note in report.notes { Terminal.note(note) }
        Terminal.line(report.description)
        if !report.isClean { throw ExitCode(CLIFailure.dataProblem) }
    }
}
