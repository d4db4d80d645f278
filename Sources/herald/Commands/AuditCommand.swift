import ArgumentParser
import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore

/// `herald audit`: why a notification was shown, hidden, or disappeared.
struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Explain the history of one object, notification or group: every event that touched it and why.",
        discussion: """
            Each line is one event (seq, recorded time, source format) and what it did:
            created as notification N in group G, shown (or not shown, and why), hidden
            because group G left the top groupCountMax when group H got a newer
            notification, shown again, dismissed by the user, cleared by a read up to X,
            wiped by a revoke (which wipes dismissed notifications too, as they are still
            in the account's state; cleared ones are gone already).

            Only events that changed the target are listed; --all adds those that named it
            without changing anything ("no effect on the target"). An object no event
            named is "never received"; a notification or group id the account never had is
            a usage error listing the nearest ids it had. Times are ISO 8601 in UTC.

            With the audit index (herald index; herald ingest keeps it), an audit without
            --all reads only the account's events from the snapshot before the target's
            first change to its last change, instead of the whole history; the lines are
            the same. The footer counts the events that merely named it only with
            --no-index, which replays everything.

            After `herald compact --discard-history` the audit starts from the base
            snapshot, with the target as it stood there ("present at the base (seq N) as
            notification M in group G, shown"). A notification out of view there that comes
            into view later "came into view" (JSON kind shownAfterBase): whether it was
            shown before the base is not in the log.

            Examples:
              herald audit --account tg:14124122 --chat user:62814 --object 590047
              herald audit --account tg:14124122 --notification 4
              herald audit --account tg:14124122 --group 2 --json
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The account.")
    var account: String

    @Option(name: .long, help: "Follow this chat's objects.")
    var chat: String?

    @Option(name: .long, help: "With --chat: only this object (message, call, … id).")
    var object: Int64?

    @Option(name: .long, help: "Follow this notification id.")
    var notification: Int64?

    @Option(name: .long, help: "Follow this group id.")
    var group: Int64?

    @Flag(name: .long, help: "Also list events that named the target without changing it.")
    var all = false

    @Flag(name: .long, help: "Replay the whole history even when the audit index could answer (the same lines, slower).")
    var noIndex = false

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    mutating func validate() throws {
        let chosen = [chat != nil, notification != nil, group != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw ValidationError("choose exactly one of --chat C [--object ID], --notification N or --group G")
        }
        if object != nil && chat == nil { throw ValidationError("--object needs --chat") }
    }

    var target: AuditTrail.Target {
        if let notification { return .notification(notification) }
        if let group { return .group(group) }
        return .object(chat: chat!, objectId: object)
    }

    func run() throws {
        let source = try store.openForReading {
            $0.replayOnOpen = false
            $0.usesAuditIndex = !noIndex
        }
        let report: Store.AuditReport
        do {
            // A replay (--no-index) lists every event at no extra cost, so that those that only
            // named the target can be counted.
            report = try source.auditReport(account: account, target: target, listingUnchanged: all || noIndex)
        } catch StoreError.Code.unknownAccount {
            // As `state --account` does: an account no event names (a mistyped name, a purged
            // account) is a usage error that lists the accounts, not an empty timeline that
            // reads as "the account exists and nothing touched this". Only this error path
            // reads the account names, for the list.
            throw try CLIFailure.unknownAccount(account, in: source)
                ?? CLIFailure(exitCode: CLIFailure.usage, "no event of the history of \(source.path) names account '\(account)'")
        } catch let error as StoreError where error.code == .unknownChat {
            let chat = error.chat ?? "", chats = error.chats ?? []
            // Likewise a chat no event of the account names: most likely a mistyped name.
            let listed = chats.prefix(20).joined(separator: ", ") + (chats.count > 20 ? ", … (\(chats.count) in all)" : "")
            throw CLIFailure(exitCode: CLIFailure.usage, "no event of account '\(account)' in \(source.path) names chat '\(chat)' (its chats: \(chats.isEmpty ? "none" : listed))")
        }
        try Self.requireKnownId(target, report, account: account, path: source.path)
        if let base = try source.history.bounds().droppedThrough {
            Terminal.noteDroppedHistory(through: base, "audit", "starts from the snapshot at seq \(base), and earlier events cannot be shown", how: try source.droppedHistoryExplanation())
        }
        let changing = report.lines.filter(\.changesTarget)
        let lines = all ? report.lines : changing
        let hidden = report.lines.count - changing.count
        let neverReceived = Self.neverReceived(target, report)
        if json {
            for line in report.jsonLines(all: all) { Terminal.line(line) }
            return
        }
        Terminal.line(Terminal.styled("audit of \(target.description) in account \(account)", .bold) + Terminal.styled("  (store \(source.path))", .dim))
        if let neverReceived { Terminal.line(neverReceived) }
        if !report.atBase.isEmpty {
            Terminal.line("")
            Terminal.line(Terminal.styled("seq \(report.baseSeq)", .cyan) + "  the snapshot the kept history starts from")
            for effect in report.atBase { Terminal.line("    • " + effect.text) }
        }
        if lines.isEmpty && report.atBase.isEmpty && neverReceived == nil {
            Terminal.line(hidden > 0 || !(all || noIndex) ? "no event changed it" : "no event touched it")
        }
        defer {
            if !all && !noIndex {
                // Only the events that changed the target were asked for (the audit index may
                // answer, reading the target's first change to its last): the rest are not counted.
                Terminal.line("")
                Terminal.line(Terminal.styled("(events that named it without changing it are not shown; --all lists them)", .dim))
            } else if hidden > 0 && !all {
                Terminal.line("")
                Terminal.line(Terminal.styled("(\(hidden) event\(hidden == 1 ? "" : "s") that named it without changing it not shown; --all lists them)", .dim))
            }
        }
        for line in lines {
            let record = line.record
            Terminal.line("")
            Terminal.line(Terminal.styled("seq \(record.seq)", .cyan) + "  \(Formatting.timestamp(milliseconds: record.recordedAt))  \(record.source.format)  \(Formatting.summary(record.event))")
            for effect in line.effects {
                Terminal.line("    • " + Self.colour(effect))
            }
        }
    }

    /// "never received" when the target is one object and no event (nor the base) named it.
    static func neverReceived(_ target: AuditTrail.Target, _ report: Store.AuditReport) -> String? {
        guard case .object(let chat, let id?) = target, report.atBase.isEmpty else { return nil }
        let named = report.lines.contains { line in
            switch line.record.event.payload {
            case .notify(let n): n.id == id && n.chat.isSameName(as: chat)
            case .edit(let e): e.id == id && e.chat.isSameName(as: chat)
            case .endCall(let c, let callId): callId == id && c.isSameName(as: chat)
            default: false
            }
        }
        return named ? nil : "never received: no event named object #\(id) of chat \(chat)"
    }

    /// A notification or group id the account never had is a usage error (exit 1), like an
    /// unknown chat, listing the nearest ids it had.
    static func requireKnownId(_ target: AuditTrail.Target, _ report: Store.AuditReport, account: String, path: String) throws {
        guard let nearest = report.nearestKnownIds else { return }
        let (what, id): (String, Int64) = switch target {
        case .notification(let id): ("notification", id)
        case .group(let id): ("group", id)
        case .object: ("object", 0)
        }
        let listed = nearest.isEmpty ? "it has none" : "nearest it had: " + nearest.map { "\($0)" }.joined(separator: ", ")
        throw CLIFailure(exitCode: CLIFailure.usage, "account '\(account)' in \(path) never had \(what) \(id) (\(listed))")
    }


    private static func colour(_ effect: AuditTrail.Effect) -> String {
        switch effect.kind {
        case "shown", "shownAgain", "shownAfterBase", "created": Terminal.styled(effect.text, .green)
        case "hidden", "notShown", "dismissed", "cleared", "wiped": Terminal.styled(effect.text, .yellow)
        case "ignored", "noEffect": Terminal.styled(effect.text, .dim)
        default: effect.text
        }
    }
}
