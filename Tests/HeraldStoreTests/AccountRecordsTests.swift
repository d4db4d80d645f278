import HeraldEvents
import HeraldProjection
import HeraldStore
import LMDB
import Testing
import HeraldTestSupport

/// Reading one account's records (what an audit reads): the same records as reading all and
/// keeping that account's, names compared byte for byte, and every other record still checked.
@Suite("One account's records")
struct AccountRecordsTests {
    @Test("an account's records are the history's records of exactly that name, on short and pipelined runs")
    func sameRecords() throws {
        let dir = TemporaryDirectory()
        let events = try PipelinedReplayTests.makeStore(at: dir.path, seed: 41)
        let store = try Store(path: dir.path)
        // Two names that are canonically equivalent but not the same bytes.
        try store.appendBatch([
            (Event(account: "\u{E9}", .notify(.init(chat: "c", kind: .message, id: 1, date: 1, title: "t"))), .library),
            (Event(account: "e\u{301}", .notify(.init(chat: "c", kind: .message, id: 2, date: 2, title: "t"))), .library),
        ])
        let accounts = Set(events.map(\.account)).sorted().prefix(3) + ["\u{E9}", "e\u{301}", "nobody"]
        for account in accounts {
            for from: UInt64 in [1, UInt64(events.count) - 100] {
                var expected: [LogRecord] = []
                try store.history.forEach(from: from) { record in
                    if Array(record.event.account.utf8) == Array(account.utf8) { expected.append(record) }
                    return true
                }
                var read: [LogRecord] = []
                try store.history.forEach(from: from, account: account) { record in
                    read.append(record)
                    return true
                }
                #expect(read == expected, "account \(account.debugDescription) from \(from)")
                if account == "nobody" { #expect(read.isEmpty) } else if from == 1 { #expect(!read.isEmpty) }
            }
        }
    }

    @Test("a damaged record of another account still fails an account's read and its audit, naming the seq")
    func otherAccountsDamageIsFound() throws {
        let dir = TemporaryDirectory()
        let events = try PipelinedReplayTests.makeStore(at: dir.path, seed: 43)
        let damagedIndex = events.indices.reversed().first { events[$0].account != events[0].account }!
        let damagedSeq = UInt64(damagedIndex + 1)
        do {
            let environment = try Environment(path: dir.path)
            let log = try #require(try environment.openDatabase("log"))
            try environment.write { txn in
                var value = try #require(try txn.get(log, key: SeqKey(damagedSeq).bytes))
                value[value.count - 6] ^= 0x40
                try txn.put(log, key: SeqKey(damagedSeq).bytes, value: value)
            }
        }
        var inspect = Store.Options()
        inspect.replayOnOpen = false
        let store = try Store(path: dir.path, options: inspect)
        func isDamage(_ error: any Error) -> Bool {
            guard let error = error as? StoreError, error.code == .damagedRecord, let seq = error.seq else { return false }
            return seq == damagedSeq
        }
        let account = events[0].account
        #expect(performing: { try store.history.forEach(account: account) { _ in true } }, throws: isDamage)
        #expect(performing: { _ = try store.audit(account: account, target: .group(1)) }, throws: isDamage)
    }

    @Test("one account's projection at a seq equals the full replay's for that account, seq included, after purge and compaction")
    func accountProjectionAtSeq() throws {
        let dir = TemporaryDirectory()
        let events = try PipelinedReplayTests.makeStore(at: dir.path, seed: 47)
        let accounts = Set(events.map(\.account)).sorted()
        // A purged account leaves gaps (its seqs), and compaction with an archive moves the
        // first part of the history into archive/.
        _ = try StoreMaintenance(path: dir.path).purge(account: accounts[0])
        do { try Store(path: dir.path).snapshot() }
        try StoreMaintenance(path: dir.path).compact()
        var inspect = Store.Options()
        inspect.replayOnOpen = false
        let store = try Store(path: dir.path, options: inspect)
        var rng = SplitMix64(seed: 48)
        let last = UInt64(events.count)
        let seqs: [UInt64] = [1, 1_999, 2_000, 2_001, last - 1, last] + (0..<6).map { _ in 1 + rng.next() % last }
        for seq in seqs {
            for useSnapshots in [true, false] {
                let full = try store.projection(at: seq, useSnapshots: useSnapshots)
                for account in accounts + ["nobody"] {
                    let one = try store.projection(at: seq, account: account, useSnapshots: useSnapshots)
                    #expect(one.seq == full.seq, "seq \(seq) account \(account)")
                    #expect(one.accounts == full.accounts.filter { $0.isSameName(as: account) }, "seq \(seq) account \(account)")
                    #expect(one.stateJSON(accounts: account) == full.stateJSON(accounts: account), "seq \(seq) account \(account)")
                }
            }
        }
    }
}
