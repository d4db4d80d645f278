import ArgumentParser
import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore

/// `herald replay`: re-run the log and print the events or the update stream.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-run the log and print each event, or the updates a client would have received.",
        discussion: """
            The replay always starts from the beginning of history (so the state is
            right): seq 1, or the base snapshot of a store compacted without an archive,
            which has no log before it. --from/--to/--account only choose what is
            printed. --set overrides settings for a what-if replay: nothing is
            written. groupCountMax and groupSizeMax override every account's view
            options; mutedUntil (Unix seconds or an ISO 8601 time; 0: not muted) or
            its alias muted=true|false replaces the mute of every logged chatSettings
            event that sets one (SEMANTICS 1.2).

            Examples:
              herald replay --store ./herald.db --updates --json
              herald replay --account tg:14124122 --from 100 --to 200 --updates
              herald replay --updates --set groupCountMax=3 --set groupSizeMax=1
              herald replay --updates --set mutedUntil=0
              herald replay --updates --set mutedUntil=2026-11-27T18:00:00Z
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "First seq to print.")
    var from: UInt64 = 1

    @Option(name: .long, help: "Last seq to print (the replay stops there).")
    var to: UInt64?

    @Option(name: .long, help: "Only print events of this account.")
    var account: String?

    @Flag(name: .long, help: "Print the updates of each event (SEMANTICS §9) instead of the events.")
    var updates = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Override a setting: groupCountMax=N or groupSizeMax=N for every account, mutedUntil=TIME or muted=true|false for every logged mute.",
            valueName: "NAME=VALUE"))
    var set: [String] = []

    @Flag(name: .long, help: "Print JSON lines (STATE.md forms).")
    var json = false

    @Flag(
        name: .long,
        help: """
            Accepted for symmetry: a replay never starts from a snapshot to save time. A store \
            compacted without an archive has no log before its base snapshot: there the replay \
            starts from that snapshot, with or without this flag.
            """)
    var noSnapshots = false

    mutating func validate() throws {
        _ = try overrides()
        if let to, to < from { throw ValidationError("--to \(to) is before --from \(from)") }
    }

    /// What `--set` overrides.
    struct Overrides {
        /// The view options.
        var configuration = Projection.Configuration()
        /// The `mutedUntil` every logged mute is replaced with.
        var mutedUntil: Int64?

        /// The event to apply instead of `event`: a `chatSettings` that sets a mute sets
        /// ``mutedUntil`` instead; `nil` when `event` is applied as logged.
        func rewritten(_ event: Event) -> Event? {
            guard let mutedUntil, case .chatSettings(var settings) = event.payload, settings.mutedUntil != nil else { return nil }
            settings.mutedUntil = mutedUntil
            return Event(account: event.account, .chatSettings(settings))
        }

        /// Whether `--set` overrides what `event` sets.
        func overrides(_ event: Event) -> Bool {
            if case .options = event.payload {
                return configuration.groupCountMaxOverride != nil || configuration.groupSizeMaxOverride != nil
            }
            return rewritten(event) != nil
        }
    }

    /// Parses `--set`.
    func overrides() throws -> Overrides {
        var overrides = Overrides()
        for item in set {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw ValidationError("--set '\(item)': expected NAME=VALUE") }
            let (name, text) = (parts[0], parts[1])
            switch name {
            case "groupCountMax", "groupSizeMax":
                guard let value = Int(text) else { throw ValidationError("--set '\(item)': expected an integer value") }
                let range = name == "groupCountMax" ? Event.groupCountMaxRange : Event.groupSizeMaxRange
                guard range.contains(value) else { throw ValidationError("--set \(name)=\(value): must be in \(range)") }
                if name == "groupCountMax" { overrides.configuration.groupCountMaxOverride = value } else { overrides.configuration.groupSizeMaxOverride = value }
            case "mutedUntil":
                // Unix seconds, or a time as `state --at` takes it (its milliseconds cut to seconds).
                guard let seconds = Int64(text) ?? Formatting.parseTime(text).map({ $0 / 1000 }), seconds >= 0 else {
                    throw ValidationError("--set '\(item)': expected Unix seconds from 0 or a time (2026-11-27T18:00:00Z)")
                }
                overrides.mutedUntil = seconds
            case "muted":
                guard let muted = Bool(text) else { throw ValidationError("--set '\(item)': expected true or false") }
                overrides.mutedUntil = muted ? Event.ChatSettings.mutedForever : 0
            default:
                throw ValidationError("--set '\(name)': unknown setting; expected groupCountMax, groupSizeMax, mutedUntil or muted")
            }
        }
        return overrides
    }

    func run() throws {
        let target = try store.openForReading { $0.replayOnOpen = false }
        let last = try target.history.bounds().highWaterSeq  // as `state --at` does (see HistoryPoint)
        if let to, to > last {
            throw CLIFailure(exitCode: CLIFailure.usage, "--to \(to) is beyond the end of the log in \(target.path) (last seq \(last))")
        }
        if let base = try target.history.bounds().droppedThrough, from <= base {
            Terminal.noteDroppedHistory(through: base, "replay", "starts from the snapshot at seq \(base), and earlier events cannot be shown", how: try target.droppedHistoryExplanation())
        }
        let overrides = try overrides()
        if !set.isEmpty {
            Terminal.note(
                "what-if replay: " + set.joined(separator: ", ")
                    + " overrides the logged options and chatSettings events (marked below); nothing is written")
        }
        let bar = ProgressBar(enabled: Terminal.stderrIsTTY, label: "replay")
        var writer = JSONWriter()
        var printed = 0
        let rewrite: ((Event) -> Event)? = overrides.mutedUntil == nil ? nil : { overrides.rewritten($0) ?? $0 }
        _ = try target.replay(through: to ?? .max, configuration: overrides.configuration, rewriting: rewrite) { record, outcome, _ in
            bar.update("seq \(record.seq) of \(last)", fraction: last == 0 ? nil : Double(record.seq) / Double(last))
            guard record.seq >= from, account.map({ record.event.account.isSameName(as: $0) }) ?? true else { return true }
            printed += 1
            if updates {
                if json {
                    Terminal.line(Projection.updatesJSON(seq: record.seq, account: record.event.account, updates: outcome.updates))
                } else {
                    Terminal.line(Self.describe(record, outcome.updates, overridden: overrides.overrides(record.event)))
                }
            } else if json {
                writer.reset()
                record.writeExportLine(to: &writer)
                Terminal.line(writer.string)
            } else {
                Terminal.line("\(record.seq)  \(Formatting.timestamp(milliseconds: record.recordedAt))  \(record.source.format)  \(record.event.account)  \(Formatting.summary(record.event))")
            }
            return true
        }
        bar.finish()
        if printed == 0, let account, let unknown = try CLIFailure.unknownAccount(account, in: target) { throw unknown }
        if printed == 0 && !json { Terminal.note("no events matched") }
    }

    /// The human form of one event's updates; `overridden` marks an event `--set` overrode.
    static func describe(_ record: LogRecord, _ updates: [Update], overridden: Bool = false) -> String {
        var lines = ["\(record.seq)  \(record.event.account)  \(Formatting.summary(record.event))"
            + (overridden ? Terminal.styled("  (overridden by --set)", .dim) : "")]
        if updates.isEmpty { lines.append(Terminal.styled("    (no visible change)", .dim)) }
        for update in updates {
            switch update {
            case .group(let g):
                var parts: [String] = []
                if !g.added.isEmpty { parts.append("+" + g.added.map { "\($0.id)" }.joined(separator: ",")) }
                if !g.removedIds.isEmpty { parts.append("-" + g.removedIds.map(String.init).joined(separator: ",")) }
                lines.append("    group \(g.groupId) \(g.type.rawValue) \(g.chat): \(parts.joined(separator: " ")) total \(g.totalCount)\(g.isSilent ? " (silent)" : "")")
            case .notification(let n):
                lines.append("    notification \(n.notification.id) in group \(n.groupId) changed: \(Formatting.clip([n.notification.title, n.notification.body].compactMap { $0 }.joined(separator: ": "), 60))")
            }
        }
        return lines.joined(separator: "\n")
    }
}
