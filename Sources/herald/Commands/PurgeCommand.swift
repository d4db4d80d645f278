import ArgumentParser
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

            Example:
              herald purge --store ./herald.db --account tg:14124122
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The account to remove.", valueName: "ACCOUNT"))
    var account: String

    mutating func validate() throws {
        guard !account.isEmpty else { throw ValidationError("--account must not be empty") }
    }

    func run() throws {
        let report = try Store.purge(path: store.path, account: account)
        var text = "purged \(account): \(report.recordsRemoved) records"
        if report.archivedRecordsRemoved > 0 { text += ", \(report.archivedRecordsRemoved) archived records" }
        text += ", \(report.quarantineRemoved) quarantine entries, \(report.keysRemoved) keys"
        text += "; \(report.gaps.count) gap\(report.gaps.count == 1 ? "" : "s") recorded"
        Terminal.line(text)
    }
}
