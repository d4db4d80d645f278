import Foundation
import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Issue #23: compaction archives by default, discarding is explicit, and every archived
/// record stays reachable after any sequence of compactions, purges, snapshots and restarts.
@Suite("History kept through compaction and purge")
struct HistoryKeptTests {
    /// Appends `events` to a store at `path` (opening and closing it), with a snapshot after.
    func append(_ events: ArraySlice<Event>, to path: String, snapshot: Bool) throws {
        let store = try Store(path: path, options: fastOptions())
        try store.append(contentsOf: events.map { ($0, .library) })
        if snapshot { try store.snapshot() }
    }

    func seqs(_ store: Store) throws -> [UInt64] {
        var seqs: [UInt64] = []
        try store.history.forEach { seqs.append($0.seq); return true }
        return seqs
    }

    @Test("compact without a flag archives: an earlier discard then a default compaction keep seqs after the discard readable")
    func discardThenArchive() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 5, seed: 77)
        try append(events[0..<1], to: dir.path, snapshot: true)
        let discarded = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        #expect(discarded.base == 1 && discarded.historyDiscarded && discarded.recordsArchived == 0)
        try append(events[1..<3], to: dir.path, snapshot: true)
        // The dry run says what would happen and changes nothing.
        let plan = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(dryRun: true)
        #expect(plan.dryRun && plan.droppedRange == 2...3 && plan.recordsRemoved == 2 && plan.recordsArchived == 2)
        #expect(plan.snapshotsRemoved.isEmpty, "the origin snapshot at 1 is kept: \(plan.snapshotsRemoved)")
        #expect(try Store(path: dir.path, options: fastOptions()).history.bounds().recordCountInLog == 2)
        let archived = try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        #expect(archived.base == 3 && archived.recordsArchived == 2 && !archived.historyDiscarded)
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try seqs(store) == [2, 3])
        #expect(try store.history.bounds().droppedThrough == 1)
        #expect(try store.snapshots.seqs().contains(1), "the snapshot the archive replays from is kept")
        // State at 2 rebuilds from the origin snapshot and the archived record 2.
        #expect(try store.projection(at: 2, useSnapshots: false) == referenceProjection(events[0..<2]))
        #expect(throws: StoreError.self) { try store.projection(at: 0, useSnapshots: false) }
        #expect(try store.verify().isClean)
        var replayed: [UInt64] = []
        _ = try store.replay { record, _, _ in replayed.append(record.seq); return true }
        #expect(replayed == [2, 3])
    }

    @Test("after a discard and then an archiving compaction, a missing archive is an error, not a shorter history")
    func missingArchiveAfterDiscard() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 30, seed: 12)
        try append(events[0..<10], to: dir.path, snapshot: true)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        try append(events[10..<20], to: dir.path, snapshot: true)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        try FileManager.default.removeItem(atPath: dir.child("archive"))
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(throws: StoreError.self) { try seqs(store) }
        #expect(try store.history.missingArchiveThrough() == 20)
    }

    @Test("a discard also discards archived records up to the new base, and says so in the dry run")
    func discardTakesTheArchiveAlong() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 40, seed: 5)
        try append(events[0..<10], to: dir.path, snapshot: true)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        try append(events[10..<20], to: dir.path, snapshot: true)
        let plan = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true, dryRun: true)
        #expect(plan.archivedRecordsDiscarded == 10 && plan.recordsRemoved == 10 && plan.historyDiscarded)
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        #expect(report.archivedRecordsDiscarded == 10 && report.recordsRemoved == 10)
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try seqs(store).isEmpty)
        #expect(try store.history.bounds().droppedThrough == 20)
        #expect(store.projection == referenceProjection(events[0..<20]))
        #expect(try store.verify().isClean)
    }

    @Test("random compactions, discards, purges, snapshots and restarts match an uncompacted twin", arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomOperations(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let dir = TemporaryDirectory()
        let compacted = dir.child("compacted")
        let twin = dir.child("twin")
        let events = randomEvents(count: 600, seed: seed &* 31)
        try append(events[0..<30], to: compacted, snapshot: true)
        try append(events[0..<30], to: twin, snapshot: false)
        var next = 30
        for _ in 0..<14 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                let count = Int.random(in: 1...60, using: &rng)
                let slice = events[next..<min(events.count, next + count)]
                next += slice.count
                let snapshot = Bool.random(using: &rng)
                try append(slice, to: compacted, snapshot: snapshot)
                try append(slice, to: twin, snapshot: false)
            case 4..<7:
                try StoreMaintenance(path: compacted, options: fastOptions()).compact()
            case 7:
                try StoreMaintenance(path: compacted, options: fastOptions()).compact(discardingHistory: true)
            case 8:
                let names = try Store(path: twin, options: fastOptions()).accountNames()
                guard let account = names.randomElement(using: &rng) else { continue }
                let mine = try StoreMaintenance(path: compacted, options: fastOptions()).purge(account: account)
                let theirs = try StoreMaintenance(path: twin, options: fastOptions()).purge(account: account)
                #expect(mine.recordsRemoved + mine.archivedRecordsRemoved <= theirs.recordsRemoved)
            default:
                _ = try Store(path: compacted, options: fastOptions()).snapshot()
            }
        }
        let store = try Store(path: compacted, options: fastOptions())
        let reference = try Store(path: twin, options: fastOptions())
        #expect(store.projection == reference.projection, "seed \(seed)")
        #expect(try store.verify().isClean, "seed \(seed)")
        let origin = try store.history.bounds().droppedThrough ?? 0
        #expect(try seqs(store) == seqs(reference).filter { $0 > origin }, "seed \(seed), origin \(origin)")
        // The updates stream after the origin is the twin's, event for event.
        var mine: [String] = []
        _ = try store.replay { record, outcome, _ in
            mine.append(Projection.updatesJSON(seq: record.seq, account: record.event.account, updates: outcome.updates))
            return true
        }
        var theirs: [String] = []
        _ = try reference.replay { record, outcome, _ in
            if record.seq > origin {
                theirs.append(Projection.updatesJSON(seq: record.seq, account: record.event.account, updates: outcome.updates))
            }
            return true
        }
        #expect(mine == theirs, "seed \(seed)")
        for point in [origin, (origin + UInt64(next)) / 2, UInt64(next)] where point >= origin && point > 0 {
            let a = try store.projection(at: point, useSnapshots: false)
            let b = try reference.projection(at: point, useSnapshots: false)
            // The accounts, not `seq`: the twin's last record at or below the point may be purged.
            let accounts = { (p: Projection) in p.stateJSON().drop { $0 != "[" } }
            #expect(accounts(a) == accounts(b), "seed \(seed) at \(point)")
        }
    }

    @Test("purge matches names byte for byte and refuses an account no record names")
    func purgeIsByteExact() throws {
        let dir = TemporaryDirectory()
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed, "Swift's == merges them; Herald must not")
        let events = [precomposed, decomposed].map { account in
            Event(account: account, .notify(.init(chat: "c", kind: .message, id: 1, date: 10, title: account)))
        }
        try append(events[...], to: dir.path, snapshot: false)
        let plan = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: precomposed, dryRun: true)
        #expect(plan.dryRun && plan.recordsRemoved == 1)
        #expect(throws: StoreError.self) { try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: "acct-9") }
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: precomposed)
        #expect(report.recordsRemoved == 1 && report.gaps == [1...1])
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try store.accountNames().map { Array($0.utf8) } == [Array(decomposed.utf8)])
        #expect(store.projection.accounts.map { Array($0.utf8) } == [Array(decomposed.utf8)])
        let stats = try store.statistics()
        #expect(stats.byAccount.count == 1 && Array(stats.byAccount[0].name.utf8) == Array(decomposed.utf8))
    }
}
