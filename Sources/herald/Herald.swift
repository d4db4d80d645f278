// `herald`: the replay CLI. Each subcommand parses and validates its arguments, then calls
// the libraries (HeraldStore, HeraldProjection, HeraldIngest) and prints what they return.

import ArgumentParser
import Foundation

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: an event-sourced notification store. Ingest pushes, rebuild and audit notification state.",
        discussion: """
            Every command but demo takes --store DIR (default: $HERALD_STORE, else ./herald.db).
            Reading commands work on a copied store too; nothing but ingest, import,
            snapshot, compact, purge, keys and quarantine retry writes.

            Global options: --color auto|always|never (auto styles a terminal only, and not
            when NO_COLOR is set or TERM=dumb); --json also makes errors one JSON object on
            stderr: {"error":{"exitCode":N,"message":"…"}}. Times are ISO 8601 in UTC.

            Exit codes:
              0  success
              1  usage error (bad option, unknown format, out-of-range value)
              2  a data problem was found (missing, locked or damaged store, failed verify,
                 output that cannot be written)
              3  some input was rejected (bad payload lines; see the quarantine)
            141  standard output was closed early (`herald export | head`), as a shell
                 reports a filter that SIGPIPE ended; herald exits instead of taking the signal

            Start with:  herald demo
            """,
        version: Herald.version,
        subcommands: [
            DemoCommand.self, IngestCommand.self, StateCommand.self, ReplayCommand.self, AuditCommand.self,
            ExportCommand.self, ImportCommand.self, StatsCommand.self, VerifyCommand.self, IndexCommand.self,
            SnapshotCommand.self, CompactCommand.self, PurgeCommand.self, QuarantineCommand.self, KeysCommand.self,
            SalvageCommand.self, BackupCommand.self,
            ServeCommand.self, MoveAccountCommand.self, LogCommand.self,
        ]
    )

    /// `herald --version`.
    static let version = "herald 0.4.0 (SEMANTICS 1.2, store format herald-store 1)"

    /// Runs the command line, mapping every failure to a documented exit code and a one-line
    /// message on stderr (never a stack trace). Commands that serve or talk to servers are
    /// `AsyncParsableCommand`s and run here in the task of `main`; the others run as they are.
    static func main() async {
        // A closed standard output is an EPIPE from write (Terminal.write exits 141), not a signal.
        signal(SIGPIPE, SIG_IGN)
        var arguments = Array(CommandLine.arguments.dropFirst())
        do {
            try GlobalOptions.extract(from: &arguments)
            if let suggestion = GlobalOptions.unknownSubcommand(in: arguments, known: subcommandNames) {
                throw CLIFailure(exitCode: CLIFailure.usage, suggestion)
            }
            var command = try parseAsRoot(arguments)
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CLIFailure {
            Terminal.failure(failure.message, exitCode: failure.exitCode)
            Foundation.exit(failure.exitCode)
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            if code == .validationFailure || error is ValidationError {
                Terminal.failure(fullMessage(for: error).replacingOccurrences(of: "Error: ", with: ""), exitCode: CLIFailure.usage)
                Foundation.exit(CLIFailure.usage)
            }
            let failure = CLIFailure(error)
            Terminal.failure(failure.message, exitCode: failure.exitCode)
            Foundation.exit(failure.exitCode)
        }
    }

    /// The names of the subcommands (and `help`).
    static var subcommandNames: [String] {
        configuration.subcommands.map { $0.configuration.commandName ?? "" } + ["help"]
    }
}
