import Foundation
import HeraldEvents
import HeraldProjection
import LMDB
import Testing
import HeraldTestSupport

@testable import HeraldStore

@Suite("Compaction, purge and verify")
struct CompactionTests {
    /// A store of `count` random events with a snapshot at `snapshotAt`.
    func makeStore(_ dir: TemporaryDirectory, events: [Event], snapshotAt: Int) throws {
        let store = try Store(path: dir.path, options: fastOptions())
        try store.append(contentsOf: events[..<snapshotAt].map { ($0, .library) })
        try store.snapshot()
        try store.append(contentsOf: events[snapshotAt...].map { ($0, .library) })
    }

    @Test("compacting with the archive keeps the whole history readable and the state exact", arguments: [true, false])
    func compact(archive: Bool) throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 3_000, seed: 21)
        try makeStore(dir, events: events, snapshotAt: 2_700)
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: !archive)
        #expect(report.base == 2_700 && report.recordsRemoved == 2_700)
        #expect(report.recordsArchived == (archive ? 2_700 : 0))
        #expect(report.bytesAfter * 3 < report.bytesBefore, "\(report.bytesBefore) → \(report.bytesAfter)")
        let reference = referenceProjection(events)
        for useSnapshots in [true, false] {
            var options = fastOptions()
            options.useSnapshots = useSnapshots
            let store = try Store(path: dir.path, options: options)
            #expect(store.projection.snapshot() == reference.snapshot())
            #expect(try store.history.bounds().firstSeqInLog == 2_701)
            var seqs: [UInt64] = []
            try store.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array((archive ? 1 : 2_701)...3_000))
            #expect(try store.verify().isClean)
            #expect(try store.history.bounds().hasArchive == archive)
        }
        // Appends continue the seqs; compacting again moves the base on.
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            #expect(try store.append(events[0]).seq == 3_001)
            try store.snapshot()
        }
        let again = try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: !archive)
        #expect(again.previousBase == 2_700 && again.base == 3_001 && again.recordsRemoved == 301)
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(store.lastSeq == 3_001)
        #expect(try store.history.bounds().recordCountInLog == 0)
        #expect(try store.verify().isClean)
        #expect(store.projection == referenceProjection(events + [events[0]]))
    }

    @Test("purge finds an account among a payload's JSON strings however they are escaped")
    func jsonStringsMatchEscapedNames() {
        let cases: [(String, String, Bool)] = [
            (#"{"account":"zulip:\u00e9\/\u00FC:x"}"#, "zulip:é/ü:x", true),
            (#"{"a":"\ud83d\ude00"}"#, "😀", true),
            (#"{"a":"x\"y","b":"z"}"#, "x\"y", true),
            (#"{"a":"zulip:é/ü:x"}"#, "zulip:é/ü:x", true),
            (#"{"a":"zulip:é/ü:xy"}"#, "zulip:é/ü:x", false),  // a longer name is another name
            (#"{"a":"tg:1"}"#, "tg:12", false),
            (#"not json, then "tg:\u0031""#, "tg:1", true),  // invalid JSON: still string by string
            (#"{"a":"tg:1"#, "tg:1", true),  // unterminated at the end
        ]
        for (bytes, name, expected) in cases {
            #expect(JSONStrings.contains(Array(bytes.utf8), Array(name.utf8)) == expected, "\(bytes) / \(name)")
        }
    }

    @Test("leftovers of an interrupted compaction are removed at the next open")
    func leftovers() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, events: randomEvents(count: 50, seed: 2), snapshotAt: 40)
        try FileManager.default.createDirectory(atPath: dir.child("compact.tmp"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir.child("compact.tmp/data.mdb"), contents: Data([1, 2, 3]))
        _ = try Store(path: dir.path, options: fastOptions())
        #expect(!FileManager.default.fileExists(atPath: dir.child("compact.tmp")))
    }

    @Test("purge removes the account's records that an interrupted compaction left below the base")
    func purgeBelowBase() throws {
        let dir = TemporaryDirectory()
        let secret = "left-behind@secret.example"
        var events = randomEvents(count: 60, seed: 4)
        for index in [3, 17, 35, 52] {
            events[index] = Event(account: secret, .notify(.init(chat: "c", kind: .message, id: Int64(index + 1), date: 1, title: "t")))
        }
        try makeStore(dir, events: events, snapshotAt: 40)
        do {
            // Compaction's first step committed (the base moved to the snapshot), and the
            // process died before deleting the records it covers.
            let store = try Store(path: dir.path, options: fastOptions())
            try store.environment.write { txn in try store.setHistory(.init(base: 40, archivedThrough: 40, origin: 40), txn) }
        }
        #expect(file(dir.child("data.mdb"), contains: Array(secret.utf8)))
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: secret)
        #expect(report.recordsRemoved == 4)
        for path in filesUnder(dir.path) { #expect(!file(path, contains: Array(secret.utf8)), "\(path)") }
    }

    @Test("a damaged base snapshot without an archive fails the open and is reported by verify")
    func damagedBase() throws {
        let dir = TemporaryDirectory()
        try makeStore(dir, events: randomEvents(count: 100, seed: 3), snapshotAt: 60)
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact(discardingHistory: true)
        try rewriteSnapshot(in: dir.path, seq: 60) { $0[30] ^= 1 }
        #expect { try Store(path: dir.path, options: fastOptions()) } throws: { error in
            if let error = error as? StoreError, error.code == .damagedSnapshot, let seq = error.seq { return seq == 60 }
            return false
        }
        var options = fastOptions()
        options.replayOnOpen = false
        let report = try Store(path: dir.path, options: options).verify()
        #expect(report.problems.contains { $0.location == .snapshot && $0.seq == 60 })
    }

    @Test("purge leaves no byte of the account in any file, keeps other accounts' state, records gaps")
    func purge() throws {
        let dir = TemporaryDirectory()
        let secret = "purge-me@secret.example"
        let secretChat = "chat-of-the-secret-account"
        var events = randomEvents(count: 1_500, seed: 5)
        var rng = SplitMix64(seed: 5)
        for index in stride(from: 0, to: events.count, by: 7) {
            events[index] = Event(account: secret, .notify(.init(
                chat: secretChat, kind: .message, id: Int64(index + 1), date: 1_700_000_000,
                title: "secret title \(Int.random(in: 0..<1000, using: &rng))", body: "secret body")))
        }
        events.append(Event(account: secret, .read(chat: secretChat, maxId: 5)))  // the last seq is purged
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events[..<800].map { ($0, .library) })
            try store.snapshot()
            try store.quarantine.add([
                QuarantinedPayload(receivedAt: 1, format: "herald", input: "-", line: 3, reason: "bad",
                    raw: Array("{\"account\":\"\(secret)\",\"oops\":1}".utf8)),
                QuarantinedPayload(receivedAt: 1, format: "herald", input: "-", line: 4, reason: "bad", raw: Array("{\"x\":1}".utf8)),
                // The account escaped in JSON (each character as \uXXXX, one astral one as a
                // surrogate pair), and an encrypted push that names it only through `--account`.
                QuarantinedPayload(receivedAt: 1, format: "herald", input: "-", line: 5, reason: "bad",
                    raw: Array(("{\"account\":\"" + secret.unicodeScalars.map { String(format: "\\u%04x", $0.value) }.joined() + "\"}").utf8)),
                QuarantinedPayload(receivedAt: 1, format: "telegram", input: "-", line: 6, reason: "no key",
                    account: secret, raw: Array("{\"p\":\"AAAA\"}".utf8)),
                QuarantinedPayload(receivedAt: 1, format: "herald", input: "-", line: 7, reason: "bad",
                    raw: Array("{\"account\":\"\\ud83d\\ude00\"}".utf8)),
            ])
        }
        try StoreMaintenance(path: dir.path, options: fastOptions()).compact()
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            try store.append(contentsOf: events[800...].map { ($0, .library) })
            try store.snapshot()
        }
        let needles = [secret, secretChat, "secret title"].map { Array($0.utf8) }
        #expect(filesUnder(dir.path).contains { path in needles.contains { file(path, contains: $0) } })
        let report = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: secret)
        let purgedCount = events.filter { $0.account == secret }.count
        #expect(report.recordsRemoved + report.archivedRecordsRemoved == purgedCount)
        #expect(report.quarantineRemoved == 3)
        for path in filesUnder(dir.path) {
            for needle in needles {
                #expect(!file(path, contains: needle), "\(path) still holds \(String(decoding: needle, as: UTF8.self))")
            }
        }
        let store = try Store(path: dir.path, options: fastOptions())
        let reference = referenceProjection(events)
        #expect(store.projection.account(secret) == nil)
        for name in reference.accounts where name != secret {
            #expect(store.projection.account(name) == reference.account(name))
        }
        #expect(store.lastSeq == UInt64(events.count))
        #expect(try store.quarantine.all().map(\.line) == [4, 7])  // the entries that do not name the account
        let verify = try store.verify()
        #expect(verify.isClean, "\(verify.problems)")
        #expect(verify.purged.reduce(0) { $0 + $1.count } == purgedCount)
        #expect(try store.append(events[1]).seq == UInt64(events.count + 1))
    }

    @Test("a flipped byte in a record, found in data.mdb, is reported with its seq and never applied")
    func damagedRecords() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 8)
        try makeStore(dir, events: events, snapshotAt: 200)
        var rng = SplitMix64(seed: 8)
        for _ in 0..<6 {
            let copy = TemporaryDirectory()
            try FileManager.default.copyItem(atPath: dir.child("data.mdb"), toPath: copy.child("data.mdb"))
            let seq = UInt64.random(in: 1...400, using: &rng)
            var options = fastOptions()
            options.replayOnOpen = false
            let bytes = try storedBytes(of: seq, in: try Store(path: copy.path, options: options))
            let data = [UInt8](FileManager.default.contents(atPath: copy.child("data.mdb"))!)
            let at = try #require(offset(of: bytes, in: data))
            try flipByte(in: copy.child("data.mdb"), at: at + Int.random(in: 0..<bytes.count, using: &rng))
            let report = try Store(path: copy.path, options: options).verify()
            #expect(report.problems.contains { $0.location == .log && $0.seq == seq }, "\(report.problems)")
            if seq > 200 {
                #expect { try Store(path: copy.path, options: fastOptions()) } throws: { error in
                    if let error = error as? StoreError, error.code == .damagedRecord, let damaged = error.seq { return damaged == seq }
                    return false
                }
            } else {
                // The snapshot at 200 covers it: the open never reads it, and the state is right.
                #expect(try Store(path: copy.path, options: fastOptions()).projection == referenceProjection(events))
            }
        }
    }

    @Test("a flipped byte in a snapshot, found in data.mdb, is reported; the open falls back to a replay")
    func damagedSnapshotInFile() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 400, seed: 10)
        try makeStore(dir, events: events, snapshotAt: 300)
        var options = fastOptions()
        options.replayOnOpen = false
        let bytes = try {
            let store = try Store(path: dir.path, options: options)
            let database = try #require(try store.existingAuxiliary(.snapshots))
            return try #require(try store.environment.read { txn in try txn.get(database, key: SeqKey(300).bytes) })
        }()
        let data = [UInt8](FileManager.default.contents(atPath: dir.child("data.mdb"))!)
        let at = try #require(offset(of: Array(bytes.prefix(64)), in: data))
        try flipByte(in: dir.child("data.mdb"), at: at + 40)
        let report = try Store(path: dir.path, options: options).verify()
        #expect(report.problems.map(\.seq) == [300] && report.problems.first?.location == .snapshot)
        #expect(try Store(path: dir.path, options: fastOptions()).projection == referenceProjection(events))
    }
}
