import ArgumentParser
import Foundation
import HeraldServer

/// `herald move-account`: one account from one `herald serve` instance to another, while
/// both serve (``AccountMove``).
struct MoveAccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move-account",
        abstract: "Move one account between two running `herald serve` instances with no loss: copy, fence, cut over, purge.",
        discussion: """
            Copies the account's events from --from to --to (new seqs there; format and digest
            kept) while the source still takes them, then fences the account on the source
            (its appends get 503 with Retry-After; clients retry and, after the cut-over, reach
            the target), copies the rest and its pushkeys, Web Push subscriptions and Telegram keys, checks
            that both instances show the same state of the account (but for seqs), points
            HAProxy's herald-accounts.map at the target (runtime API and file), and purges the
            account from the source, whose fence stays. Tokens are admin tokens of each
            instance ($HERALD_ADMIN_TOKEN for both unless given).

            The purge removes the account's records from the source for good: it asks for
            confirmation on a terminal (--yes for scripts); --dry-run only counts what would
            move; --keep-source skips the purge.

            Example:
              herald move-account --account tg:1 --from http://10.0.0.1:8080 --to http://10.0.0.2:8080 \\
                --haproxy-socket /run/haproxy/herald.sock --haproxy-map /etc/haproxy/herald-accounts.map \\
                --target-backend herald-b
            """
    )

    @Option(name: .long, help: "The account to move.")
    var account: String

    @Option(name: .long, help: ArgumentHelp("The instance that holds it now (base URL).", valueName: "URL"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("The instance to move it to (base URL).", valueName: "URL"))
    var to: String

    @Option(name: .long, help: "The source's admin token (default $HERALD_ADMIN_TOKEN).")
    var fromToken: String?

    @Option(name: .long, help: "The target's admin token (default $HERALD_ADMIN_TOKEN).")
    var toToken: String?

    @Option(name: .long, help: ArgumentHelp("HAProxy's runtime API socket (stats socket … level admin).", valueName: "PATH"))
    var haproxySocket: String?

    @Option(name: .long, help: ArgumentHelp("The accounts map file named in haproxy.cfg.", valueName: "PATH"))
    var haproxyMap: String?

    @Option(name: .long, help: "The HAProxy backend that reaches the target (the map's value).")
    var targetBackend: String?

    @Flag(name: .long, help: "Keep the account's records on the source (no purge).")
    var keepSource = false

    @Flag(name: .long, help: "Count what would move; change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Do not ask for confirmation before the purge.")
    var yes = false

    func validate() throws {
        let routing = [haproxySocket, haproxyMap, targetBackend].compactMap { $0 }.count
        guard routing == 0 || routing == 3 else {
            throw ValidationError("--haproxy-socket, --haproxy-map and --target-backend go together")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment["HERALD_ADMIN_TOKEN"]
        guard let sourceToken = fromToken ?? environment, let targetToken = toToken ?? environment else {
            throw CLIFailure(exitCode: CLIFailure.usage, "no admin token: pass --from-token and --to-token, or set HERALD_ADMIN_TOKEN")
        }
        var move = AccountMove(account: account, source: from, sourceToken: sourceToken, target: to, targetToken: targetToken)
        move.purgeSource = !keepSource
        if let haproxySocket, let haproxyMap, let targetBackend {
            move.routing = HAProxyRouting(socketPath: haproxySocket, mapPath: haproxyMap)
            move.targetBackend = targetBackend
        }
        let plan = try await move.plan()
        let summary = "\(plan.events) events, \(plan.pushkeys) pushkeys, \(plan.subscriptions) Web Push subscriptions"
        if dryRun {
            Terminal.line("dry run: would move \(account) from \(from) to \(to): \(summary)"
                + (plan.targetHasAccount ? "; but the target already holds the account, so the move would stop" : ""))
            return
        }
        if !keepSource {
            try Terminal.confirm("Move \(account) (\(summary)) to \(to), then purge it from \(from) for good?", yes: yes)
        }
        let report = try await move.run { Terminal.note($0) }
        Terminal.line(
            "moved \(account): \(report.eventsCopied) events in \(report.passes) passes, appends refused for "
                + "\(report.fencedMilliseconds) ms, \(report.pushkeys) pushkeys, \(report.subscriptions) subscriptions, "
                + "\(report.purged) records purged from the source")
    }
}
