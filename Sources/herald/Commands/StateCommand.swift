import ArgumentParser
import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore

/// `herald state`: active groups and counts now, or at any point of history.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show active notification groups and unread counts, now or at any point in history.",
        discussion: """
            --at takes a seq (e.g. 1200), -N (N events before the end), a time in ISO 8601
            (2026-11-21T10:00:00Z; without a zone it is UTC: 2026-11-21 10:00), a date (the
            start of that day, UTC), yesterday or today, a time ago (-1h, -15m, -2d, -1w) or
            Unix seconds (@1763719200): the state right after that event, or just before
            the first event recorded after that time (the log as it stood then, even if
            the clock went back later).

            Examples:
              herald state --store ./herald.db
              herald state --account tg:14124122 --at 1200 --json
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "Only this account.")
    var account: String?

    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp(
            "A seq, -N (N events before the end), a time (ISO 8601; a date; yesterday; -1h, -2d) or @UNIXSECONDS.",
            valueName: "SEQ|TIME"))
    var at: String?

    @Flag(name: .long, help: "Print the JSON state form (STATE.md).")
    var json = false

    @Flag(
        name: .long,
        help: """
            Rebuild by replaying the log instead of starting from the newest snapshot. A store \
            compacted without an archive has no log before its base snapshot: there the replay \
            still starts from that snapshot (and --at cannot go below its seq).
            """)
    var noSnapshots = false

    func run() throws {
        let target = try store.openForReading {
            $0.replayOnOpen = at == nil
            $0.useSnapshots = !noSnapshots
        }
        if let through = try target.history.missingArchiveThrough() {
            // The state comes from a snapshot and the log after it, which it does not need the
            // archive for; say what could not be checked.
            Terminal.note(
                "archive/ is missing (it held the history through seq \(through)): this state starts from a snapshot "
                    + "after it and cannot be checked against the history before; restore archive/ to replay or verify it")
        }
        let projection: Projection
        if let at {
            let seq = try HistoryPoint.resolve(at, in: target)
            if let account {
                // One account: only its records are decoded and applied.
                let one = try target.projection(at: seq, account: account, useSnapshots: !noSnapshots)
                // An account not there at that seq: the whole state, for the list of accounts below.
                projection = one.account(account) != nil ? one : try target.projection(at: seq, useSnapshots: !noSnapshots)
            } else {
                projection = try target.projection(at: seq, useSnapshots: !noSnapshots)
            }
        } else {
            projection = target.projection
        }
        if let account, projection.account(account) == nil {
            throw CLIFailure(exitCode: CLIFailure.usage, "no account '\(account)' in \(target.path) (accounts: \(projection.accounts.joined(separator: ", ")))")
        }
        if json {
            Terminal.line(projection.stateJSON(accounts: account))
        } else {
            Terminal.line(StateRendering.render(projection, account: account))
        }
    }
}

/// Resolves `--at SEQ|TIME` against a store.
enum HistoryPoint {
    static func resolve(_ text: String, in store: Store) throws -> UInt64 {
        // The highest seq given out, not the last record's: compaction and purges may have
        // removed the newest records, whose seqs still name points of history.
        let last = try store.history.bounds().highWaterSeq
        if let seq = UInt64(text) {
            guard seq <= last else {
                throw CLIFailure(exitCode: CLIFailure.usage, "--at \(seq) is beyond the end of the log in \(store.path) (last seq \(last))")
            }
            return seq
        }
        // `-N`: N events before the end, as a negative index counts from the end.
        if text.hasPrefix("-"), let back = UInt64(text.dropFirst()) {
            guard back <= last else {
                throw CLIFailure(exitCode: CLIFailure.usage, "--at \(text): the log in \(store.path) has only \(last) seqs")
            }
            return last - back
        }
        guard let time = Formatting.parseTime(text) else {
            throw CLIFailure(
                exitCode: CLIFailure.usage,
                "--at '\(text)': expected a seq (1200), -N (N events before the end), a time (2026-11-21T10:00:00Z, "
                    + "2026-11-21 10:00, 2026-11-24, yesterday, -1h, -2d) or @UNIXSECONDS")
        }
        return try store.history.lastSeq(recordedAtOrBefore: time) ?? 0
    }
}

/// The human rendering of a state.
enum StateRendering {
    static func render(_ projection: Projection, account filter: String?) -> String {
        var lines = [Terminal.styled("state after seq \(projection.seq)", .bold)]
        let names = filter.map { [$0] } ?? projection.accounts
        if names.isEmpty { lines.append("(no accounts yet)") }
        for name in names {
            guard let account = projection.account(name) else { continue }
            lines.append("")
            lines.append(Terminal.styled("account \(name)", .cyan)
                + "  unread \(account.unread.unread)  badge \(account.unread.badge)  mentions \(account.unread.unreadMentions)"
                + "  clock \(account.clock == 0 ? "not set" : Formatting.date(seconds: account.clock))"
                + Terminal.styled("  (groupCountMax \(account.groupCountMax), groupSizeMax \(account.groupSizeMax))", .dim))
            if !account.chats.isEmpty {
                var table = Table("chat", "unread", "mentions", "read up to", "settings")
                for chat in account.chats {
                    let settings = [mute(chat), chat.disableMentions ? "no-mentions" : nil, chat.disablePinned ? "no-pinned" : nil]
                        .compactMap { $0 }.joined(separator: ",")
                    table.add(chat.chat, "\(chat.unread)", "\(chat.unreadMentions)", "\(chat.readMaxId)", settings)
                }
                lines.append(table.rendered.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            }
            if account.groups.isEmpty {
                lines.append("  no notification is shown")
            } else {
                lines.append("  shown, in order:")
                for group in account.groups {
                    lines.append("  " + Terminal.styled("group \(group.groupId)", .bold)
                        + " \(group.type.rawValue) of \(group.chat), \(group.totalCount) in total")
                    for notification in group.notifications {
                        lines.append("    " + Formatting.notification(notification))
                    }
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A chat's mute as the settings column shows it (SEMANTICS 1.2 §2): `muted` for good
    /// (`muted: true`), `muted until DATE` while it runs at the account's clock, `mute ran out
    /// DATE` once the clock passed it; `nil` when the chat was never muted.
    static func mute(_ chat: ChatState) -> String? {
        switch chat.mutedUntil {
        case 0: nil
        case Event.ChatSettings.mutedForever where chat.muted: "muted"
        case let until: chat.muted ? "muted until \(Formatting.date(seconds: until))" : "mute ran out \(Formatting.date(seconds: until))"
        }
    }
}
