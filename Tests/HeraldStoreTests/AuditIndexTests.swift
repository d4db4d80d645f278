import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import LMDB
import Testing
import HeraldTestSupport

/// The audit index (`auditTargets`, `auditSeqs`): audits and one-account `state --at` that it
/// answers are those of a replay of the whole history, and it never answers when it cannot.
///
/// Serialized: its cases are CPU-bound, seconds each in a debug build, so one at a time holds
/// a thread of the cooperative pool (see `ExecutorTrait`).
@Suite("Audit index", .serialized)
struct AuditIndexTests {
    /// Events of every type over three accounts, chats that differ only by Unicode
    /// normalization, small view limits (so groups leave and re-enter the view), revokes.
    static func events(count: Int, seed: UInt64) -> [Event] {
        var rng = SplitMix64(seed: seed)
        let accounts = ["tg:1", "tg:2", "\u{E9}"]
        let chats = ["user:1", "chat:2", "channel:3", "caf\u{E9}", "cafe\u{301}"]
        var events: [Event] = []
        for i in 0..<count {
            let account = accounts.randomElement(using: &rng)!
            let chat = chats.randomElement(using: &rng)!
            let id = Int64.random(in: 1...120, using: &rng)
            let payload: Event.Payload
            switch Int.random(in: 0..<110, using: &rng) {
            case 0..<55:
                payload = .notify(.init(
                    chat: chat, kind: NotificationKind.allCases.randomElement(using: &rng)!, id: id,
                    date: 1_700_000_000 + Int64(i) - Int64.random(in: 0...50, using: &rng), silent: Bool.random(using: &rng),
                    partial: Int.random(in: 0..<4, using: &rng) == 0, title: "t\(i)", body: "b\(i)"))
            case 55..<65: payload = .read(chat: chat, maxId: Int64.random(in: 1...120, using: &rng))
            case 65..<69: payload = .delete(ids: [id, id + 1], chat: Bool.random(using: &rng) ? chat : nil)
            case 69..<75: payload = .dismiss(notificationId: Int64.random(in: 1...80, using: &rng))
            case 75..<78:
                payload = .dismissGroup(groupId: Int64.random(in: 1...20, using: &rng),
                    maxNotificationId: Bool.random(using: &rng) ? Int64.random(in: 1...80, using: &rng) : nil)
            case 78..<82: payload = .edit(.init(chat: chat, kind: .message, id: id, title: "e\(i)"))
            case 82..<85: payload = .endCall(chat: chat, id: id)
            case 85..<88: payload = .readReactions(chat: chat, ids: [id])
            case 88..<93:
                payload = .chatSettings(.init(
                    chat: chat, muted: Int.random(in: 0..<3, using: &rng) == 0,
                    disableMentions: Bool.random(using: &rng), disablePinned: Bool.random(using: &rng)))
            case 93..<98:
                payload = .options(groupCountMax: Int.random(in: 0...4, using: &rng), groupSizeMax: Int.random(in: 1...4, using: &rng))
            // SEMANTICS 1.2: mentions a history read keeps, and the new reads and deletes.
            case 100..<104: payload = .readMentions(chat: chat, ids: Bool.random(using: &rng) ? nil : [id])
            case 104..<106: payload = .readAll(chat: Bool.random(using: &rng) ? chat : nil)
            case 106..<108: payload = .clearHistory(chat: chat, maxId: id)
            case 108..<110: payload = .tick(now: 1_700_000_000 + Int64(i))
            default: payload = .revoke
            }
            events.append(Event(account: account, payload))
        }
        return events
    }

    /// A store of `events`, appended in batches with snapshots every 150 seqs (kept spaced
    /// every 300), its audit index caught up twice on the way and at the end.
    static func makeStore(at path: String, events: [Event]) throws -> Store {
        var options = Store.Options()
        options.snapshotInterval = 150
        options.snapshotSpacing = 300
        let store = try Store(path: path, options: options)
        for start in stride(from: 0, to: events.count, by: 100) {
            try store.appendBatch(events[start..<min(start + 100, events.count)].map { ($0, .library) })
            if start == 700 || start == 1_300 {
                store.snapshots.waitUntilIdle()
                try store.auditIndex.catchUp(starting: true)
            }
        }
        store.snapshots.waitUntilIdle()
        #expect(try store.auditIndex.catchUp(starting: true) == UInt64(events.count))
        return store
    }

    /// Every target of every account: each object and chat named, each notification and
    /// group id given out (and one past the last).
    static func targets(_ events: [Event], _ projection: Projection) -> [(String, AuditTrail.Target)] {
        var targets: [(String, AuditTrail.Target)] = []
        for account in Set(events.map { NameKey($0.account) }).sorted() {
            let named = events.filter { $0.account.isSameName(as: account.name) }
            for chat in Set(named.compactMap { $0.chat.map(NameKey.init) }).sorted() {
                targets.append((account.name, .object(chat: chat.name, objectId: nil)))
                for id in Set(named.compactMap { event -> Int64? in
                    if case .notify(let n) = event.payload, n.chat.isSameName(as: chat.name) { return n.id }
                    return nil
                }).sorted() {
                    targets.append((account.name, .object(chat: chat.name, objectId: id)))
                }
            }
            for id in 1...80 { targets.append((account.name, .notification(Int64(id)))) }
            for id in 1...20 { targets.append((account.name, .group(Int64(id)))) }
        }
        return targets
    }

    /// How many targets of a seeded history the checks below audit: an evenly spread sample
    /// of 40 (each audit replays the history, and a debug build takes about a minute for all
    /// the targets of one), or every target with `HERALD_AUDIT_TARGETS=all` (or N of them).
    static let targetCount: Int = {
        let value = ProcessInfo.processInfo.environment["HERALD_AUDIT_TARGETS"]
        return value == "all" ? .max : value.flatMap(Int.init) ?? 40
    }()

    /// ``targets(_:_:)``, every one or an evenly spread ``targetCount`` of them: the same
    /// for the same history, and covering every account and kind of target.
    static func sampledTargets(_ events: [Event], _ projection: Projection) -> [(String, AuditTrail.Target)] {
        let all = targets(events, projection)
        guard all.count > targetCount else { return all }
        let step = Double(all.count) / Double(targetCount)
        return (0..<targetCount).map { all[Int(Double($0) * step)] }
    }

    /// The lines that changed the target, with their effects: what `herald audit` prints
    /// without --all.
    static func changing(_ report: Store.AuditReport) -> [Store.AuditLine] {
        report.lines.filter(\.changesTarget)
    }

    @Test("an indexed audit lists exactly the changes a full replay lists, for a spread of targets of seeded histories", arguments: [5, 6, 7] as [UInt64])
    func indexedAuditsEqualReplay(seed: UInt64) throws {
        let dir = TemporaryDirectory()
        let events = Self.events(count: 2_000, seed: seed)
        let store = try Self.makeStore(at: dir.path, events: events)
        #expect(try store.snapshots.seqs().count > 5)
        var indexed = 0
        var replayed = 0
        for (account, target) in Self.sampledTargets(events, store.projection) {
            let full: Store.AuditReport
            do {
                full = try store.auditReport(account: account, target: target, listingUnchanged: true)
            } catch StoreError.Code.unknownChat {
                continue
            }
            let fast = try store.auditReport(account: account, target: target, listingUnchanged: false)
            let replay = try store.replayedAuditReport(account: account, target: target, listingUnchanged: false)
            if let answered = try store.auditIndex.report(account: account, target: target) {
                indexed += 1
                #expect(answered == replay, "the index's report is the replay's: \(account) \(target)")
            } else {
                replayed += 1
            }
            #expect(fast == replay, "\(account) \(target)")
            #expect(fast.lines == Self.changing(full), "\(account) \(target)")
            #expect(fast.atBase == full.atBase && fast.baseSeq == full.baseSeq && fast.nearestKnownIds == full.nearestKnownIds)
        }
        // Most targets were answered from the index (the rest: never changed, or present in
        // the snapshot before their first change after a revoke reused their id).
        #expect(indexed > 3 * replayed, "indexed \(indexed), replayed \(replayed)")
    }

    @Test("auditReport gives the same report with the audit index on and off (--no-index), for a spread of targets of a seeded history")
    func sameReportWithAndWithoutIndex() throws {
        let dir = TemporaryDirectory()
        let events = Self.events(count: 1_500, seed: 41)
        // In order, not keyed by a name: "café" and "cafe\u{301}" are equal Swift strings.
        var answers: [Store.AuditReport?] = []
        var indexed = 0
        do {
            let store = try Self.makeStore(at: dir.path, events: events)
            for (account, target) in Self.sampledTargets(events, store.projection) {
                answers.append(try? store.auditReport(account: account, target: target, listingUnchanged: false))
                if try store.auditIndex.report(account: account, target: target) != nil { indexed += 1 }
            }
        }
        #expect(indexed > answers.count / 2, "indexed \(indexed) of \(answers.count)")
        var options = Store.Options()
        options.usesAuditIndex = false
        let store = try Store(path: dir.path, options: options)
        let targets = Self.sampledTargets(events, store.projection)
        #expect(targets.count == answers.count)
        for ((account, target), answer) in zip(targets, answers) {
            #expect(try store.auditIndex.report(account: account, target: target) == nil, "the index is off")
            let replayed = try? store.auditReport(account: account, target: target, listingUnchanged: false)
            #expect(replayed == answer, "\(account) \(target)")
        }
    }

    @Test("state --at SEQ of one account from the index equals the full replay's, seq included")
    func indexedStateAt() throws {
        let dir = TemporaryDirectory()
        let events = Self.events(count: 1_500, seed: 11)
        let store = try Self.makeStore(at: dir.path, events: events)
        var rng = SplitMix64(seed: 12)
        for _ in 0..<40 {
            let seq = UInt64.random(in: 1...UInt64(events.count), using: &rng)
            for account in ["tg:1", "tg:2", "\u{E9}", "e\u{301}"] {
                let fast = try store.projection(at: seq, account: account)
                let full = try store.projection(at: seq, account: account, useSnapshots: false)
                #expect(fast == full, "seq \(seq) \(account)")
                #expect(fast.seq == full.seq && fast.seq == seq)
                #expect(fast.stateJSON() == full.stateJSON())
            }
        }
    }

    @Test("purge removes the account's entries only; compaction with an archive keeps the index answering")
    func purgeAndCompaction() throws {
        let dir = TemporaryDirectory()
        let events = Self.events(count: 1_200, seed: 21)
        do { _ = try Self.makeStore(at: dir.path, events: events) }
        _ = try StoreMaintenance(path: dir.path).purge(account: "tg:2")
        try StoreMaintenance(path: dir.path).compact()
        var options = Store.Options()
        options.snapshotSpacing = 300
        let store = try Store(path: dir.path, options: options)
        #expect(try store.auditIndex.through() == UInt64(events.count))
        let verified = try store.verify()
        #expect(verified.isClean, "\(verified.problems.prefix(3).map(\.description))")
        #expect(throws: StoreError.self) { _ = try store.auditReport(account: "tg:2", target: .group(1), listingUnchanged: false) }
        var indexed = 0
        var checked = 0
        for (account, target) in Self.sampledTargets(events, store.projection) where account != "tg:2" {
            guard let full = try? store.auditReport(account: account, target: target, listingUnchanged: true) else { continue }
            checked += 1
            let fast = try store.auditReport(account: account, target: target, listingUnchanged: false)
            if try store.auditIndex.report(account: account, target: target) != nil { indexed += 1 }
            #expect(Self.changing(fast) == Self.changing(full), "\(account) \(target)")
        }
        #expect(indexed > checked / 2, "indexed \(indexed) of \(checked)")
        // Appends after the purge are indexed from where it stood.
        try store.appendBatch([(Event(account: "tg:1", .notify(.init(chat: "user:1", kind: .call, id: 9_999, date: 1_800_000_000))), .library)])
        #expect(try store.auditIndex.catchUp(starting: true) == UInt64(events.count + 1))
        let fast = try store.auditReport(account: "tg:1", target: .object(chat: "user:1", objectId: 9_999), listingUnchanged: false)
        #expect(try store.auditIndex.report(account: "tg:1", target: .object(chat: "user:1", objectId: 9_999)) == fast && fast.lines.count == 1)
    }

    @Test("a damaged, lost or stale index entry is never trusted: the audit replays and gives the same answer")
    func damageFallsBack() throws {
        let dir = TemporaryDirectory()
        let events = Self.events(count: 1_000, seed: 31)
        do { _ = try Self.makeStore(at: dir.path, events: events) }
        let account = "tg:1"
        let target = AuditTrail.Target.object(chat: "user:1", objectId: nil)
        func check(_ what: String) throws {
            let store = try Store(path: dir.path)
            let full = try store.auditReport(account: account, target: target, listingUnchanged: true)
            let fast = try store.auditReport(account: account, target: target, listingUnchanged: false)
            #expect(Self.changing(fast) == Self.changing(full), "\(what)")
        }
        try check("intact")
        #expect(try Store(path: dir.path).verify().isClean)
        let environment = try Environment(path: dir.path)
        let targets = try #require(try environment.openDatabase("auditTargets"))
        let seqs = try #require(try environment.openDatabase("auditSeqs"))
        // Every window entry's last seq bumped down by one byte flip: checksums fail.
        try Self.flipLastByteOfEveryValue(targets, in: environment)
        do {
            let store = try Store(path: dir.path)
            #expect(try store.auditIndex.report(account: account, target: target) == nil, "a damaged window must not be used")
            let report = try store.verify()
            #expect(!report.isClean && report.problems.allSatisfy { $0.location == .auditIndex })
            // Catching up does not merge into damaged buckets (their windows would be lost):
            // it rebuilds the index.
            try store.appendBatch([(Event(account: account, .notify(.init(chat: "user:1", kind: .call, id: 7_777, date: 1_800_000_000))), .library)])
            #expect(try store.auditIndex.catchUp() == UInt64(events.count + 1))
            #expect(try store.verify().isClean)
            #expect(try store.auditIndex.report(account: account, target: target) != nil)
        }
        try check("damaged windows")
        // Windows repaired by a rebuild, then one chunk of account seqs lost.
        do {
            let store = try Store(path: dir.path)
            try store.auditIndex.drop()
            try store.auditIndex.catchUp(starting: true)
            #expect(try store.auditIndex.report(account: account, target: target) != nil)
        }
        try environment.write { txn in
            try txn.withCursor(seqs) { cursor in
                _ = try cursor.first()
                try cursor.deleteCurrent()
            }
        }
        try check("lost chunk")
        #expect(try Store(path: dir.path).verify().problems.contains { $0.location == .auditIndex && $0.message.contains("seqs differ") })
        // An index behind the log is not used until it catches up.
        do {
            let store = try Store(path: dir.path)
            try store.auditIndex.drop()
            try store.auditIndex.catchUp(starting: true)
            try store.appendBatch([(Event(account: account, .read(chat: "user:1", maxId: 1_000)), .library)])
            let fast = try store.auditReport(account: account, target: target, listingUnchanged: false)
            #expect(try store.auditIndex.report(account: account, target: target) == nil)
            let full = try store.auditReport(account: account, target: target, listingUnchanged: true)
            #expect(Self.changing(fast) == Self.changing(full))
            try store.snapshot()
        }
        // Still stale after a compaction moved every record, the new one too, into the archive
        // (the log is empty): the index is behind the highest seq, not the log's last key.
        try StoreMaintenance(path: dir.path).compact()
        do {
            let store = try Store(path: dir.path)
            #expect(try store.history.bounds().lastSeqInLog == 0)
            #expect(try store.auditIndex.report(account: account, target: target) == nil)
            #expect(try store.auditIndex.catchUp() == UInt64(events.count + 2))
            #expect(try store.auditIndex.report(account: account, target: target) != nil)
        }
        // Damaged chunks of account seqs: the next catch-up rebuilds rather than chaining past them.
        try Self.flipLastByteOfEveryValue(seqs, in: environment)
        do {
            let store = try Store(path: dir.path)
            try store.appendBatch([(Event(account: account, .read(chat: "user:1", maxId: 2_000)), .library)])
            #expect(try store.auditIndex.catchUp() == UInt64(events.count + 3))
            #expect(try store.verify().isClean)
        }
    }

    /// Flips the lowest bit of the last byte of every value of `database`, in one commit.
    @Test("an index built before SEMANTICS 1.2 is not used, and the next catch-up rebuilds it")
    func indexOfEarlierRulesIsRebuilt() throws {
        let dir = TemporaryDirectory("audit-index-semantics")
        let events = Self.events(count: 600, seed: 12)
        do { _ = try Self.makeStore(at: dir.path, events: events) }
        // What a store indexed by an earlier build holds: no `auditIndexSemantics` in `meta`.
        do {
            let environment = try Environment(path: dir.path)
            let meta = try #require(try environment.openDatabase("meta"))
            let deleted = try environment.write { txn in try txn.delete(meta, key: Array("auditIndexSemantics".utf8)) }
            #expect(deleted)
        }
        let store = try Store(path: dir.path)
        #expect(try store.auditIndex.through() == 0, "an index of earlier rules must not answer")
        let account = events[0].account
        let target = AuditTrail.Target.object(chat: "user:1", objectId: nil)
        #expect(try store.auditIndex.report(account: account, target: target) == nil)
        // Ingest's catch-up (not asked to start one) rebuilds it under today's rules.
        #expect(try store.auditIndex.catchUp() == UInt64(events.count))
        #expect(try store.auditIndex.through() == UInt64(events.count))
        #expect(try store.verify().isClean)
        let fast = try store.auditReport(account: account, target: target, listingUnchanged: false)
        #expect(try store.auditIndex.report(account: account, target: target) == fast)
        #expect(Self.changing(fast) == Self.changing(try store.auditReport(account: account, target: target, listingUnchanged: true)))
    }

    static func flipLastByteOfEveryValue(_ database: Database, in environment: Environment) throws {
        try environment.write { txn in
            let entries: [([UInt8], [UInt8])] = try txn.withCursor(database) { cursor in
                var all: [([UInt8], [UInt8])] = []
                var entry = try cursor.first()
                while let current = entry { all.append((Array(current.key), Array(current.value))); entry = try cursor.next() }
                return all
            }
            for (key, var value) in entries {
                value[value.count - 1] ^= 0x01
                try txn.put(database, key: key, value: value)
            }
        }
    }
}
