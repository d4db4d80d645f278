import ArgumentParser
import HeraldStore

/// `herald backup`: a consistent, compacted copy of a store, taken while it is in use.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store, consistently and compacted, into a new directory, even while it is being written.",
        discussion: """
            Copies every LMDB environment of the store (the log, archive/, serve/) with
            LMDB's compacting copy, one read transaction each, so that the copies agree on the
            history, and archive retention's exports beside them; lock files are left out.
            `herald serve` or an ingest may go on writing meanwhile. The copy is written to a
            hidden sibling of DIR, checked as `herald verify` does, and renamed to DIR; files
            are 0600. DIR must not exist, or be an empty directory (exit 2 otherwise). Prints
            the bytes written, the seq range held and the time taken.

            To restore, stop the server, then move the backup into place:
              mv herald.db herald.db.old && mv DIR herald.db

            Example:
              herald backup --store ./herald.db --to /backups/herald-2026-11-27
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The backup directory to write (new, or empty).", valueName: "DIR"))
    var to: String

    @Flag(name: .long, help: "Print the report as one JSON object.")
    var json = false

    func run() throws {
        let report = try StoreMaintenance(path: store.path).backup(to: to)
        Terminal.line(json ? report.json : report.description)
    }
}
