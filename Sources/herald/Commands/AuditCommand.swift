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

            After `herald compact` without an archive the audit starts from the base
            snapshot. A notification out of view there that comes into view later "came
            into view" (JSON kind shownAfterBase): whether it was shown before the base is
            not in the log.

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
        let source = try store.openForReading { $0.replayOnOpen = false }
        let lines: [Store.AuditLine]
        do {
            lines = try source.audit(account: account, target: target)
        } catch StoreError.unknownAccount {
            // As `state --account` does: an account no event names (a mistyped name, a purged
            // account) is a usage error that lists the accounts, not an empty timeline that
            // reads as "the account exists and nothing touched this". Only this error path
            // builds the state, for the list.
            let projection = try source.projection(at: try source.highWaterSeq())
            throw CLIFailure(exitCode: CLIFailure.usage, "no account '\(account)' in \(source.path) (accounts: \(projection.accounts.joined(separator: ", ")))")
        } catch StoreError.unknownChat(_, _, let chat, let chats) {
            // Likewise a chat no event of the account names: most likely a mistyped name.
            let listed = chats.prefix(20).joined(separator: ", ") + (chats.count > 20 ? ", … (\(chats.count) in all)" : "")
            throw CLIFailure(exitCode: CLIFailure.usage, "no event of account '\(account)' in \(source.path) names chat '\(chat)' (its chats: \(chats.isEmpty ? "none" : listed))")
        }
        if let base = try source.historyDroppedThrough() {
            Terminal.noteDroppedHistory(through: base, "audit", "starts from the snapshot at seq \(base), and earlier events cannot be shown")
        }
        if json {
            for line in lines { Terminal.line(Self.json(line)) }
            return
        }
        Terminal.line(Terminal.styled("audit of \(Self.describe(target)) in account \(account)", .bold) + Terminal.styled("  (store \(source.path))", .dim))
        guard !lines.isEmpty else {
            Terminal.line("no event touched it")
            return
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

    static func describe(_ target: AuditTrail.Target) -> String {
        switch target {
        case .notification(let id): "notification \(id)"
        case .group(let id): "group \(id)"
        case .object(let chat, nil): "chat \(chat)"
        case .object(let chat, let id?): "object #\(id) of chat \(chat)"
        }
    }

    private static func colour(_ effect: AuditTrail.Effect) -> String {
        switch effect.kind {
        case "shown", "shownAgain", "shownAfterBase", "created": Terminal.styled(effect.text, .green)
        case "hidden", "notShown", "dismissed", "cleared", "wiped": Terminal.styled(effect.text, .yellow)
        case "ignored", "noEffect": Terminal.styled(effect.text, .dim)
        default: effect.text
        }
    }

    static func json(_ line: Store.AuditLine) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("seq"); writer.int(line.record.seq)
        writer.key("recorded"); writer.string(Formatting.timestamp(milliseconds: line.record.recordedAt))
        writer.key("format"); writer.string(line.record.source.format)
        writer.key("event"); line.record.event.writeJSON(to: &writer)
        writer.key("effects")
        writer.arrayStart()
        for effect in line.effects {
            writer.objectStart()
            writer.key("kind"); writer.string(effect.kind)
            if let id = effect.notificationId { writer.key("notificationId"); writer.int(id) }
            if let id = effect.groupId { writer.key("groupId"); writer.int(id) }
            writer.key("text"); writer.string(effect.text)
            writer.objectEnd()
        }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.string
    }
}
