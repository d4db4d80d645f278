// `herald`: the replay CLI. Each subcommand parses and validates its arguments, then calls
// the libraries (HeraldStore, HeraldProjection, HeraldIngest) and prints what they return.

import ArgumentParser
import Foundation

@main
struct Herald: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Herald: an event-sourced notification store. Ingest pushes, rebuild and audit notification state.",
        discussion: """
            Every command but demo takes --store DIR (default: $HERALD_STORE, else ./herald.db).
            Reading commands work on a copied store too; nothing but ingest, import,
            snapshot, compact, purge, keys and quarantine retry writes.

            Exit codes:
              0  success
              1  usage error (bad option, unknown format, out-of-range value)
              2  a data problem was found (missing, locked or damaged store, failed verify)
              3  some input was rejected (bad payload lines; see the quarantine)

            Start with:  herald demo
            """,
        subcommands: [
            DemoCommand.self, IngestCommand.self, StateCommand.self, ReplayCommand.self, AuditCommand.self,
            ExportCommand.self, ImportCommand.self, StatsCommand.self, VerifyCommand.self,
            SnapshotCommand.self, CompactCommand.self, PurgeCommand.self, QuarantineCommand.self, KeysCommand.self,
            ServeCommand.self,
        ]
    )

    /// Runs the command line, mapping every failure to a documented exit code and a one-line
    /// message on stderr (never a stack trace).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CLIFailure {
            Terminal.error(failure.message)
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
                Terminal.error(fullMessage(for: error).replacingOccurrences(of: "Error: ", with: ""))
                Foundation.exit(CLIFailure.usage)
            }
            let failure = CLIFailure(error)
            Terminal.error(failure.message)
            Foundation.exit(failure.exitCode)
        }
    }
}
