import ArgumentParser
import HeraldEvents
import Foundation
import HeraldStore

/// `herald purge`: remove every trace of one account.
struct PurgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Remove every event, snapshot entry, archived record, quarantine entry and key of one account.",
        discussion: """
            Snapshots are rebuilt without the account and the data files rewritten, so no
            freed page keeps its bytes. Its seqs become recorded gaps, which verify
            accepts. Needs the writer lock. If interrupted, run it again.

            The account name is matched byte for byte (a name in another Unicode
            normalization form is another account). An account no record names is a usage
            error listing the store's accounts. It asks for confirmation on a terminal;
            scripts pass --yes. --dry-run prints what would be erased and changes nothing.

            Example:
              herald purge --store ./herald.db --account tg:14124122 --dry-run
              herald purge --store ./herald.db --account tg:14124122
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The account to remove.", valueName: "ACCOUNT"))
    var account: String

    @Flag(name: .long, help: "Print what would be erased; change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Do not ask for confirmation.")
    var yes = false

    @Flag(name: .long, help: "Print the report (or, with --dry-run, the plan) as one JSON object.")
    var json = false

    static func json(_ report: PurgeReport) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("account"); writer.string(report.account)
        writer.key("dryRun"); writer.bool(report.dryRun)
        writer.key("recordsRemoved"); writer.int(report.recordsRemoved)
        writer.key("archivedRecordsRemoved"); writer.int(report.archivedRecordsRemoved)
        writer.key("quarantineRemoved"); writer.int(report.quarantineRemoved)
        writer.key("keysRemoved"); writer.int(report.keysRemoved)
        writer.key("gaps"); writer.ranges(report.gaps)
        writer.key("snapshots"); writer.ints(report.snapshots)
        writer.objectEnd()
        return writer.string
    }

    mutating func validate() throws {
        guard !account.isEmpty else { throw ValidationError("--account must not be empty") }
    }

    func run() throws {
        do {
            try purge()
        } catch StoreError.Code.unknownAccount {
            let known = try store.openForReading { $0.replayOnOpen = false }.accountNames()
            throw CLIFailure(
                exitCode: CLIFailure.usage,
                "no record of \(store.path) names account '\(account)' (accounts: "
                    + (known.isEmpty ? "none" : known.joined(separator: ", ")) + "); nothing was purged")
        }
    }

    /// The plan (read-only) only when it is shown or asked about: with `--yes`, the purge's
    /// own pass over the log finds the account's records, and refuses an unknown account.
    private func purge() throws {
        if dryRun || !yes {
            let plan = try StoreMaintenance(path: store.path).purge(account: account, dryRun: true)
            let what = "\(plan.recordsRemoved) log records, \(plan.archivedRecordsRemoved) archived records, "
                + "\(plan.quarantineRemoved) quarantine entries and \(plan.keysRemoved) keys of account '\(account)'"
            if dryRun && json {
                Terminal.line(Self.json(plan))
                return
            }
            if dryRun {
                var lines = ["dry run: would erase \(what)"]
                lines.append("  seqs left as gaps: " + (plan.gaps.isEmpty ? "none" : plan.gaps.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }.joined(separator: ", ")))
                lines.append("  snapshots rewritten without it: " + (plan.snapshots.isEmpty ? "none" : plan.snapshots.map { "seq \($0)" }.joined(separator: ", ")))
                Terminal.line(lines.joined(separator: "\n"))
                return
            }
            try Terminal.confirm("Erase \(what) from \(store.path) for good?", yes: yes)
        }
        let report = try StoreMaintenance(path: store.path).purge(account: account)
        if json {
            Terminal.line(Self.json(report))
            return
        }
        var text = "purged \(account): \(report.recordsRemoved) records"
        if report.archivedRecordsRemoved > 0 { text += ", \(report.archivedRecordsRemoved) archived records" }
        text += ", \(report.quarantineRemoved) quarantine entries, \(report.keysRemoved) keys"
        text += "; \(report.gaps.count) gap\(report.gaps.count == 1 ? "" : "s") recorded"
        Terminal.line(text)
    }
}
