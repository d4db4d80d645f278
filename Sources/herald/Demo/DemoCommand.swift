import ArgumentParser
import Foundation
import HeraldEvents
import HeraldIngest
import HeraldProjection
import HeraldStore

/// `herald demo`: a guided tour on a temporary store, built from real push payloads.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tour Herald on a temporary store built from real push payloads.",
        discussion: """
            Ingests bundled Telegram (plain and encrypted), Zulip, APNs, Matrix and RongCloud
            payloads, shows the updates a client receives as they happen and the
            notifications a person would see, crashes a writer with SIGKILL and restarts,
            and prints an audit.

            Example:
              herald demo --keep
            """
    )

    @Flag(name: .long, help: "Keep the temporary store and print commands to explore it.")
    var keep = false

    func run() throws {
        let directory = NSTemporaryDirectory() + "herald-demo-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        var tour = DemoTour(directory: directory)
        try tour.ingestRealPayloads()
        try tour.showHideAndBringBack()
        tour.showActiveNotifications()
        try tour.crashAndRestart()
        try tour.auditHiddenNotification()
        tour.finish(keep: keep)
    }
}

/// The steps of the demo, sharing one store directory.
struct DemoTour {
    let directory: String
    let telegram = "tg:14124122"
    private var store: Store?

    init(directory: String) {
        self.directory = directory
    }

    private mutating func open() throws -> Store {
        if let store { return store }
        let opened = try Store(path: directory)
        store = opened
        return opened
    }

    static func heading(_ number: Int, _ text: String) {
        Terminal.line("")
        Terminal.line(Terminal.styled("\(number). \(text)", .bold))
    }

    /// Step 1: real payloads through the ingest adapters into the log, with their updates.
    mutating func ingestRealPayloads() throws {
        Terminal.line(Terminal.styled("Herald demo", .bold) + " — a temporary store at \(directory)")
        Self.heading(1, "Real pushes arrive; each becomes canonical events in the log, and the projection emits updates")
        let store = try open()
        let key = try TelegramKey(base64url: DemoPayloads.telegramKey)
        let zulipKey = try ZulipPushKey(argument: DemoPayloads.zulipPushKey)
        for sample in DemoPayloads.samples {
            let context = IngestContext(
                account: sample.account, receivedAt: 1_754_385_400, telegramKeys: [key], webPush: nil, innerFormat: nil,
                zulipPushKeys: [zulipKey])
            let result = try Ingest.decode(Array(sample.payload.utf8), format: PayloadFormat(rawValue: sample.format), context: context)
            Terminal.line("")
            Terminal.line(Terminal.styled("← \(sample.title)", .cyan) + Terminal.styled(" (\(sample.payload.utf8.count) bytes\(result.encrypted ? ", encrypted" : ""))", .dim))
            let source = Source(format: result.format.rawValue, payload: Array(sample.payload.utf8))
            for applied in try store.append(contentsOf: result.events.map { ($0, source) }) {
                Self.printApplied(applied)
            }
        }
        // The RongCloud message again, from the app's IM connection: one notification, upgraded.
        let message = DemoPayloads.rongCloudConnectionMessage
        Terminal.line("")
        Terminal.line(Terminal.styled("← the same RongCloud message, from the app's IM connection (RongCloudMessage)", .cyan))
        for applied in try store.append(contentsOf: try message.events(account: DemoPayloads.rongCloudAccount).map { ($0, Source.library) }) {
            Self.printApplied(applied)
        }
    }

    /// Step 2: a small group limit hides a group, and a read brings it back.
    mutating func showHideAndBringBack() throws {
        Self.heading(2, "Only the newest groups are shown: with groupCountMax 2, a third chat hides the oldest group; reading brings it back")
        let store = try open()
        let events: [Event] = [
            Event(account: telegram, .options(groupCountMax: 2, groupSizeMax: nil)),
            Event(account: telegram, .notify(.init(chat: "user:777", kind: .message, id: 9, date: 1_754_385_500, title: "Mom", body: "Call me when you land"))),
            Event(account: telegram, .read(chat: "user:777", maxId: 9)),
        ]
        for event in events {
            Terminal.line("")
            Terminal.line(Terminal.styled("→ \(Formatting.summary(event))", .cyan))
            Self.printApplied(try store.append(event))
        }
    }

    static func printApplied(_ applied: Applied) {
        Terminal.line("  #\(applied.seq) \(applied.event.account): \(Formatting.summary(applied.event))")
        if applied.updates.isEmpty {
            Terminal.line(Terminal.styled("    (nothing on screen changes)", .dim))
        }
        for update in applied.updates {
            switch update {
            case .group(let g):
                var parts: [String] = []
                for n in g.added { parts.append(Terminal.styled("+ show \(n.id)", .green) + " \(Formatting.clip([n.title, n.body].compactMap { $0 }.joined(separator: ": "), 50))") }
                if !g.removedIds.isEmpty { parts.append(Terminal.styled("− hide \(g.removedIds.map(String.init).joined(separator: ", "))", .yellow)) }
                Terminal.line("    updateNotificationGroup \(g.groupId) (\(g.type.rawValue) of \(g.chat), total \(g.totalCount)\(g.isSilent ? ", silent" : ", with sound")): " + parts.joined(separator: "; "))
            case .notification(let n):
                Terminal.line("    updateNotification \(n.notification.id): \(Formatting.clip([n.notification.title, n.notification.body].compactMap { $0 }.joined(separator: ": "), 60))")
            }
        }
    }

    /// Step 3: what a person sees.
    mutating func showActiveNotifications() {
        Self.heading(3, "What each account's notification shade shows now (the active-notifications view)")
        guard let store else { return }
        let projection = store.projection
        for name in projection.accounts {
            guard let account = projection.account(name) else { continue }
            Terminal.line("")
            Terminal.line(" ▸ " + Terminal.styled(name, .bold) + "   unread \(account.unread.unread) · badge \(account.unread.badge) · mentions \(account.unread.unreadMentions)")
            if account.groups.isEmpty { Terminal.line("   ┃ (nothing shown)") }
            for group in account.groups {
                Terminal.line("   ┃ " + Terminal.styled("\(group.type.rawValue) · \(group.chat)", .cyan) + Terminal.styled(" · group \(group.groupId) · \(group.totalCount) in total", .dim))
                for n in group.notifications {
                    let text = [n.title, n.body].compactMap { $0 }.joined(separator: " — ")
                    Terminal.line("   ┃   " + Formatting.clip(text.isEmpty ? "(\(n.kind.rawValue) #\(n.objectId))" : text, 64) + Terminal.styled("  \(Formatting.date(seconds: n.date).dropLast().suffix(8))", .dim))
                }
            }
        }
    }

    /// Step 4: a writer killed mid-stream loses no acknowledged event.
    mutating func crashAndRestart() throws {
        Self.heading(4, "Crash: a writer process is killed with SIGKILL mid-ingest; restart loses no acknowledged event")
        let before = store?.lastSeq ?? 0
        store = nil  // close: the child process takes the writer lock
        let crash = try CrashDrill(directory: directory, account: telegram, firstSeq: before + 1).run(killAfterAcks: 200)
        Terminal.line("  child pid \(crash.pid) acknowledged \(crash.acknowledged.count) events (seq \(crash.acknowledged.first ?? 0)…\(crash.acknowledged.last ?? 0)), then got SIGKILL")
        let started = Date()
        let reopened = try open()
        let elapsed = Date().timeIntervalSince(started) * 1000
        let present = try Set(reopened.history.records(from: before + 1).map(\.seq))
        let lost = crash.acknowledged.filter { !present.contains($0) }
        Terminal.line("  restart: reopened and rebuilt state in \(String(format: "%.1f", elapsed)) ms; \(reopened.lastSeq - before) events after the crash point are in the log")
        Terminal.line("  " + (lost.isEmpty
            ? Terminal.styled("every acknowledged event is there (0 lost)", .green)
            : Terminal.styled("LOST \(lost.count) acknowledged events: \(lost.prefix(5))", .red)))
        guard lost.isEmpty else { throw CLIFailure(exitCode: CLIFailure.dataProblem, "the crash drill lost acknowledged events") }
    }

    /// Step 5: why did the first group's notification disappear and come back?
    mutating func auditHiddenNotification() throws {
        Self.heading(5, "Audit: why did notification 1 of \(telegram) disappear, and come back?")
        let store = try open()
        for line in try store.audit(account: telegram, target: .notification(1)) {
            Terminal.line("  seq \(line.record.seq)  \(line.record.source.format)  \(Formatting.summary(line.record.event))")
            for effect in line.effects { Terminal.line("      • \(effect.text)") }
        }
    }

    func finish(keep: Bool) {
        Terminal.line("")
        if keep {
            Terminal.line(Terminal.styled("The store is kept. Try:", .bold))
            for command in [
                "herald state --store \(directory)",
                "herald replay --store \(directory) --updates --account \(telegram)",
                "herald audit --store \(directory) --account \(telegram) --chat chat:241233",
                "herald stats --store \(directory)",
                "herald export --store \(directory) | head",
            ] { Terminal.line("  " + command) }
        } else {
            Terminal.line("Done. Run `herald demo --keep` to keep the store and explore it with state, replay, audit and stats.")
        }
    }
}
