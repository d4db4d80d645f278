import ArgumentParser
import Foundation
import HeraldEvents
import HeraldReplication
import HeraldStore

/// `herald log status|prune`: a log replicated through PostgreSQL (`herald serve
/// --replicated-log`), read and bounded from outside the nodes.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Inspect or prune a log replicated through PostgreSQL (herald serve --replicated-log).",
        subcommands: [LogStatusCommand.self, LogPruneCommand.self]
    )
}

/// The URL and log id both subcommands take.
struct ReplicatedLogOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The PostgreSQL database of the log (default $HERALD_LOG_URL; the password is never printed).", valueName: "postgres://USER:PASSWORD@HOST:PORT/DATABASE"))
    var replicatedLog: String?

    @Option(name: .long, help: ArgumentHelp("The partition's log id (default $HERALD_LOG_ID).", valueName: "ID"))
    var logId: String?

    /// The checked address and the log id; a usage failure when either is missing.
    func resolved() throws -> (LogAddress, String) {
        let environment = ProcessInfo.processInfo.environment
        guard let url = replicatedLog ?? environment["HERALD_LOG_URL"], !url.isEmpty else {
            throw CLIFailure(exitCode: CLIFailure.usage, "--replicated-log URL (or $HERALD_LOG_URL) is required")
        }
        guard let logId = logId ?? environment["HERALD_LOG_ID"], !logId.isEmpty else {
            throw CLIFailure(exitCode: CLIFailure.usage, "--log-id ID (or $HERALD_LOG_ID) is required")
        }
        do {
            return (try LogAddress(url), logId)
        } catch {
            throw CLIFailure(exitCode: CLIFailure.usage, error.message)
        }
    }
}

/// `herald log status`: owner, epoch, seqs held, followers' lag.
struct LogStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print a replicated log's owner, epoch, first and last seq, and each known follower's lag.",
        discussion: """
            Example:
              herald log status --replicated-log postgres://herald@127.0.0.1:5432/herald --log-id p1 --json
            """
    )

    @OptionGroup var log: ReplicatedLogOptions

    @Flag(name: .long, help: "Print one JSON object (schema/replicated-log.md).")
    var json = false

    func run() throws {
        let (address, logId) = try log.resolved()
        let status = try LogAdmin.status(address: address, logId: logId)
        Terminal.line(json ? Self.json(status) : Self.text(status))
    }

    static func text(_ status: LogAdmin.Status) -> String {
        var lines = [
            "log id      \(status.logId) in \(status.database)",
            "owner       \(status.owner.map { "\($0) (epoch \(status.epoch), heard from \(Int(status.ownerSilentSeconds ?? 0)) s ago)" } ?? "none")",
            "seqs        \(status.firstSeq.map { "\($0)...\(status.lastSeq)" } ?? "none held") (pruned through \(status.prunedThrough))",
        ]
        if status.followers.isEmpty { lines.append("followers   none known") }
        for follower in status.followers {
            lines.append("follower    \(follower.node): applied \(follower.appliedSeq), lag \(follower.lag), heard from \(Int(follower.silentSeconds)) s ago")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ status: LogAdmin.Status) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("database"); writer.string(status.database)
        writer.key("epoch"); writer.int(status.epoch)
        writer.key("first_seq"); if let first = status.firstSeq { writer.int(first) } else { writer.null() }
        writer.key("followers")
        writer.arrayStart()
        for follower in status.followers {
            writer.objectStart()
            writer.key("applied_seq"); writer.int(follower.appliedSeq)
            writer.key("lag"); writer.int(follower.lag)
            writer.key("node"); writer.string(follower.node)
            writer.key("silent_seconds"); writer.int(Int64(follower.silentSeconds))
            writer.objectEnd()
        }
        writer.arrayEnd()
        writer.key("last_seq"); writer.int(status.lastSeq)
        writer.key("log_id"); writer.string(status.logId)
        writer.key("owner"); if let owner = status.owner { writer.string(owner) } else { writer.null() }
        writer.key("owner_silent_seconds"); writer.int(Int64(status.ownerSilentSeconds ?? 0))
        writer.key("pruned_through"); writer.int(status.prunedThrough)
        writer.objectEnd()
        return writer.string
    }
}

/// `herald log prune`: deletes PostgreSQL's records up to a seq a verified backup covers.
struct LogPruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete a replicated log's records up to SEQ from PostgreSQL, once a verified backup covers SEQ.",
        discussion: """
            --backup names a store written by `herald backup` of a node of this log; it is
            verified as `herald verify` does, and must hold record SEQ byte for byte as the
            log does. A node whose store ends before SEQ can then only be replaced from that
            backup (restore it, then start the node: it catches up from SEQ + 1). Asks for
            confirmation on a terminal.

            Example:
              herald log prune --replicated-log postgres://herald@127.0.0.1:5432/herald --log-id p1 \\
                --through 1000000 --backup /backups/p1-2026-11-28
            """
    )

    @OptionGroup var log: ReplicatedLogOptions

    @Option(name: .long, help: ArgumentHelp("The last seq to delete.", valueName: "SEQ"))
    var through: UInt64

    @Option(name: .long, help: ArgumentHelp("A backup (herald backup) covering SEQ.", valueName: "DIR"))
    var backup: String?

    @Flag(name: .long, help: "Say what would be deleted, delete nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Do not ask for confirmation.")
    var yes = false

    func run() throws {
        let (address, logId) = try log.resolved()
        guard let backup else {
            throw CLIFailure(
                exitCode: CLIFailure.usage,
                "refusing to prune log id \(logId) through seq \(through): name a verified backup covering it with --backup DIR (herald backup)")
        }
        guard FileManager.default.fileExists(atPath: backup + "/data.mdb") else {
            throw CLIFailure(exitCode: CLIFailure.usage, "refusing to prune: \(backup) holds no store (no data.mdb); name a directory written by herald backup")
        }
        let report = try StoreMaintenance(path: backup).verify(checkingSnapshots: false)
        guard report.problems.isEmpty else {
            throw CLIFailure(
                exitCode: CLIFailure.dataProblem,
                "refusing to prune: the backup at \(backup) does not verify: \(report.problems.first!) (\(report.problems.count) problems)")
        }
        var options = Store.Options()
        options.readOnly = true
        options.create = false
        options.checksPages = true
        options.replayOnOpen = false
        let store = try Store(path: backup, options: options)
        let plan = try LogAdmin.prune(address: address, logId: logId, through: through, backup: store, dryRun: true)
        if dryRun {
            Terminal.line("would delete \(plan.records) records of log id \(logId) through seq \(through) from \(address) (backup \(backup) covers it)")
            return
        }
        try Terminal.confirm("Delete \(plan.records) records of log id \(logId) through seq \(through) from \(address) for good?", yes: yes)
        let done = try LogAdmin.prune(address: address, logId: logId, through: through, backup: store, dryRun: false)
        Terminal.line("deleted \(done.records) records of log id \(logId) through seq \(through) from \(address)")
    }
}
