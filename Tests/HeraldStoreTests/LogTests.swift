import Foundation
import HeraldEvents
import HeraldStore
import LMDB
import Synchronization
import Testing
import HeraldTestSupport

@Suite("Event log")
struct LogTests {
    @Test("seq keys sort numerically as bytes and round-trip")
    func seqKeys() {
        let seqs: [UInt64] = [1, 2, 255, 256, 65_535, 65_536, 1 << 32, UInt64.max - 1, .max]
        for (a, b) in zip(seqs, seqs.dropFirst()) {
            #expect(SeqKey(a).bytes.lexicographicallyPrecedes(SeqKey(b).bytes))
        }
        for seq in seqs {
            let bytes = SeqKey(seq).bytes
            #expect(bytes.count == 8)
            #expect(bytes.withUnsafeBytes { SeqKey(bytes: $0) } == SeqKey(seq))
        }
        #expect([UInt8](repeating: 0, count: 7).withUnsafeBytes { SeqKey(bytes: $0) } == nil)
    }

    @Test("appended events read back with contiguous seqs, and again after reopening")
    func appendAndReopen() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 500, seed: 1)
        var options = Store.Options()
        options.clock = { 1_700_000_000_123 }
        do {
            let store = try Store(path: dir.path, options: options)
            #expect(store.lastSeq == 0)
            let source = Source(format: "herald", digest: Array(repeating: 0xAB, count: 16))
            #expect(try store.append(contentsOf: events[..<100].map { ($0, source) }).first?.seq == 1)
            for event in events[100...] { try store.append(event) }
            #expect(store.lastSeq == 500)
        }
        let reopened = try Store(path: dir.path)
        #expect(reopened.lastSeq == 500)
        let records = try reopened.history.records()
        #expect(records.map(\.seq) == Array(1...500))
        #expect(records.map(\.event) == events)
        #expect(records[0].source.format == "herald" && records[0].source.digest?.count == 16)
        #expect(records[499].source == .library)
        #expect(records.allSatisfy { $0.recordedAt == 1_700_000_000_123 })
        #expect(try reopened.history.records(from: 10, through: 12).map(\.seq) == [10, 11, 12])
        #expect(try reopened.history.records(from: 501).isEmpty)
    }

    @Test("the seq at a time is the log up to the first record stamped later, even when the clock went back")
    func seqAtTime() throws {
        let dir = TemporaryDirectory()
        // Stamps of seqs 1…5: the clock goes back between seqs 3 and 4.
        let stamps = Stamps([1_000, 2_000, 3_000, 1_500, 4_000])
        var options = Store.Options()
        options.clock = { stamps.next() }
        let store = try Store(path: dir.path, options: options)
        for event in randomEvents(count: 5, seed: 3) { try store.append(event) }
        #expect(try store.history.records().map(\.recordedAt) == [1_000, 2_000, 3_000, 1_500, 4_000])
        #expect(try store.history.lastSeq(recordedAtOrBefore: 999) == nil)
        #expect(try store.history.lastSeq(recordedAtOrBefore: 1_000) == 1)
        // Seq 4 is stamped 1,500 but was appended after seq 3 (3,000): at 2,500 it did not exist.
        #expect(try store.history.lastSeq(recordedAtOrBefore: 2_500) == 2)
        #expect(try store.history.lastSeq(recordedAtOrBefore: 3_999) == 4)
        #expect(try store.history.lastSeq(recordedAtOrBefore: 4_000) == 5)
    }

    /// A clock reading from a list of stamps, for ``seqAtTime()``.
    final class Stamps: @unchecked Sendable {
        // @unchecked: appends run one at a time in the test, each reading the clock once.
        private var stamps: [Int64]
        init(_ stamps: [Int64]) { self.stamps = stamps }
        func next() -> Int64 { stamps.count > 1 ? stamps.removeFirst() : stamps[0] }
    }

    @Test("a batch with one invalid event appends nothing")
    func batchAtomicity() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(Event(account: "a", .revoke))
        var batch = randomEvents(count: 10, seed: 2).map { ($0, Source.library) }
        batch[7].0 = Event(account: "a", .dismiss(notificationId: 0))
        #expect {
            try store.append(contentsOf: batch)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .invalidEvent, let index = error.batchIndex, let cause = error.eventError else { return false }
            return index == 7 && cause.field == "notificationId"
        }
        #expect(store.lastSeq == 1)
        #expect(try store.history.records().count == 1)
    }

    @Test("one invalid event appended alone is rejected, naming its field, and nothing is stored")
    func singleInvalidEvent() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path)
        try store.append(Event(account: "a", .revoke))
        #expect {
            try store.append(Event(account: "a", .read(chat: "c", maxId: 0)))
        } throws: { error in
            // One event, no batch: the message does not talk about one.
            guard let error = error as? StoreError, error.code == .invalid, let cause = error.eventError else { return false }
            return cause.field == "maxId" && !"\(error)".contains("batch") && "\(error)".contains("maxId")
        }
        #expect(store.lastSeq == 1)
        #expect(try store.history.records().count == 1)
        // The store still takes valid events after the rejection.
        #expect(try store.append(Event(account: "a", .revoke)).seq == 2)
    }

    @Test("the map grows from a tiny size instead of failing the write")
    func mapGrowth() throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.initialMapSize = 64 << 10
        options.durability = .noSync
        let store = try Store(path: dir.path, options: options)
        let before = store.environmentInfo().mapSize
        let events = randomEvents(count: 20_000, seed: 3)
        for start in stride(from: 0, to: events.count, by: 2_000) {
            try store.append(contentsOf: events[start..<(start + 2_000)].map { ($0, .library) })
        }
        #expect(store.environmentInfo().mapSize > before)
        #expect(try store.history.bounds().recordCountInLog == 20_000)
        #expect(try store.history.records(from: 19_999).map(\.event) == Array(events[19_998...]))
    }

    @Test("a second writer is refused with an error naming the store path")
    func secondWriter() throws {
        let dir = TemporaryDirectory()
        let first = try Store(path: dir.path)
        #expect {
            _ = try Store(path: dir.path)
        } throws: { error in
            // Refused as a writer of this very process, not after waiting for the lock as
            // for a closed store's lock still shared with a child being spawned.
            guard let error = error as? StoreError, error.code == .locked, let path = error.path, case let holder = error.holder else { return false }
            return path == dir.path && "\(error)".contains(dir.path) && holder?.contains("in this process") == true
        }
        // A reader is welcome while the writer is open, and sees its commits.
        try first.append(Event(account: "a", .revoke))
        var readOnly = Store.Options()
        readOnly.readOnly = true
        let reader = try Store(path: dir.path, options: readOnly)
        #expect(try reader.history.bounds().lastSeqInLog == 1)
        try first.append(Event(account: "a", .revoke))
        #expect(try reader.history.bounds().lastSeqInLog == 2)
        #expect(throws: StoreError.self) { try reader.append(Event(account: "a", .revoke)) }
    }

    @Test("of writers opened at once by threads of one process, one wins; after it closes, the store opens again")
    func racingWriters() throws {
        let dir = TemporaryDirectory()
        let path = dir.path
        try Store(path: path).append(Event(account: "a", .revoke))
        let opened = Mutex<[Store]>([]), refused = Mutex<[any Error]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let store = try Store(path: path)
                opened.withLock { $0.append(store) }
            } catch {
                refused.withLock { $0.append(error) }
            }
        }
        #expect(opened.withLock { $0.count } == 1)
        let errors = refused.withLock { $0 }
        #expect(errors.count == 3)
        for error in errors {
            guard let error = error as? StoreError, error.code == .locked, case let holder = error.holder else { Issue.record("\(error)"); continue }
            #expect(holder?.contains("in this process") == true)
        }
        opened.withLock { $0.removeAll() }
        #expect(try Store(path: dir.path).history.bounds().lastSeqInLog == 1)
    }

    @Test("opening a missing store read-only says so")
    func missingStore() {
        var options = Store.Options()
        options.readOnly = true
        #expect {
            _ = try Store(path: "/nonexistent/herald-\(UUID().uuidString)", options: options)
        } throws: { error in
            if let error = error as? StoreError, error.code == .notFound { return true }
            return false
        }
    }

    @Test("concurrent producers share commits and every event lands exactly once")
    func concurrentProducers() async throws {
        let dir = TemporaryDirectory()
        var options = Store.Options()
        options.durability = .noSync
        let store = try Store(path: dir.path, options: options)
        let producers = 8, perProducer = 100
        let seqs = try await withThrowingTaskGroup(of: [(UInt64, Event)].self) { group in
            for p in 0..<producers {
                group.addTask {
                    try (0..<perProducer).map { i in
                        let event = Event(account: "p\(p)", .note(source: "test", reason: "\(i)"))
                        return (try store.append(event).seq, event)
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(seqs.map(\.0)) == Set(1...UInt64(producers * perProducer)))
        let records = try await store.history.records()
        for (seq, event) in seqs { #expect(records[Int(seq) - 1].event == event) }
    }

    @Test("a damaged record is reported with its seq")
    func damagedRecord() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            try store.append(contentsOf: randomEvents(count: 5, seed: 4).map { ($0, .library) })
        }
        // Damage record 3 through LMDB directly, as a disk fault would.
        do {
            let environment = try Environment(path: dir.path)
            let log = try #require(try environment.openDatabase("log"))
            try environment.write { txn in
                var value = try #require(try txn.get(log, key: SeqKey(3).bytes))
                value[value.count / 2] ^= 0x40
                try txn.put(log, key: SeqKey(3).bytes, value: value)
            }
        }
        // Opening replays the log, so the damage stops the open, naming the seq.
        #expect {
            _ = try Store(path: dir.path)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .damagedRecord, let seq = error.seq else { return false }
            return seq == 3
        }
        var inspect = Store.Options()
        inspect.replayOnOpen = false
        let store = try Store(path: dir.path, options: inspect)
        #expect(try store.history.records(through: 2).count == 2)
        #expect {
            _ = try store.history.records()
        } throws: { error in
            guard let error = error as? StoreError, error.code == .damagedRecord, let seq = error.seq, let reason = error.reason else { return false }
            return seq == 3 && reason.contains("checksum")
        }
    }

    @Test("appends keep zeros written ahead of the pages in use; they are not data, and a compacting copy leaves them out")
    func preallocation() throws {
        let dir = TemporaryDirectory()
        let events = randomEvents(count: 3_000, seed: 8)
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            for event in events { try store.append(event) }
            let used = store.environmentInfo().usedBytes
            let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: dir.child("data.mdb"))[.size] as? Int)
            let ahead = min(max(used / 4, 64 << 10), 1 << 20)
            #expect(fileSize >= used + ahead / 4, "\(fileSize) bytes for \(used) in use")
            #expect(fileSize <= used + ahead)
        }
        let stat = try run("/usr/bin/mdb_stat", ["-a", dir.path])
        #expect(stat.status == 0, "mdb_stat failed: \(stat.output)")
        let used: Int
        do {
            let reopened = try Store(path: dir.path, options: fastOptions())
            #expect(try reopened.history.records().map(\.event) == events)
            #expect(try reopened.verify().isClean)
            used = reopened.environmentInfo().usedBytes
        }
        let copy = dir.child("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try Environment(path: dir.path).copy(to: copy, compact: true)
        let copySize = try #require(try FileManager.default.attributesOfItem(atPath: copy + "/data.mdb")[.size] as? Int)
        #expect(copySize <= used)
    }

    @Test("the store is a plain LMDB environment for mdb_stat and mdb_dump")
    func lmdbTools() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            try store.append(contentsOf: randomEvents(count: 42, seed: 5).map { ($0, .library) })
        }
        let stat = try run("/usr/bin/mdb_stat", ["-a", dir.path])
        #expect(stat.status == 0, "mdb_stat (Debian lmdb-utils) failed: \(stat.output)")
        #expect(stat.output.contains("Status of log"))
        #expect(stat.output.contains("Entries: 42"))
        let dump = try run("/usr/bin/mdb_dump", ["-s", "log", dir.path])
        #expect(dump.status == 0, "mdb_dump failed: \(dump.output)")
        // One key line and one value line per record, keys as 8-byte big-endian hex.
        #expect(dump.output.contains(" 0000000000000001\n"))
        #expect(dump.output.contains(" 000000000000002a\n"))
    }
}

@Suite("Log format document")
struct LogFormatDocumentTests {
    @Test("the worked example of schema/log-format.md is what the encoder writes")
    func workedExample() throws {
        let record = LogRecord(
            seq: 1, recordedAt: 1_700_000_000_000, source: .library,
            event: Event(account: "a", .read(chat: "c", maxId: 300)))
        let expected: [UInt8] = [
            0x01, 0x00, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31, 0x07, 0x6c, 0x69, 0x62, 0x72, 0x61, 0x72, 0x79,
            0x03, 0x01, 0x61, 0x01, 0x63, 0xac, 0x02, 0x9d, 0xc4, 0x3a, 0x1c,
        ]
        #expect(record.encoded == expected)
        #expect(try expected.withUnsafeBytes { try LogRecord(seq: 1, bytes: $0) } == record)
        #expect(try expected.withUnsafeBytes { try LogRecord.decodeEvent($0) } == record.event)
        var damaged = expected
        damaged[18] ^= 1
        #expect(throws: LogRecord.Damage.self) { try damaged.withUnsafeBytes { try LogRecord.decodeEvent($0) } }
        // With a digest, the event-only decoder skips it.
        let withDigest = LogRecord(seq: 2, recordedAt: 5, source: Source(format: "telegram", digest: Array(0..<16)), event: record.event)
        #expect(try withDigest.encoded.withUnsafeBytes { try LogRecord.decodeEvent($0) } == record.event)
    }

    @Test("the version 2 worked example of schema/log-format.md is what the encoder writes")
    func workedExampleVersion2() throws {
        let record = LogRecord(
            seq: 1, recordedAt: 1_700_000_000_000, source: .library,
            event: Event(account: "a", .tick(now: 1_700_000_000)))
        let expected: [UInt8] = [
            0x02, 0x00, 0x80, 0xd0, 0x95, 0xff, 0xbc, 0x31, 0x07, 0x6c, 0x69, 0x62, 0x72, 0x61, 0x72, 0x79,
            0x0f, 0x01, 0x61, 0x80, 0xe2, 0xcf, 0xaa, 0x06, 0x8d, 0x43, 0x77, 0x62,
        ]
        #expect(record.encoded == expected)
        #expect(try expected.withUnsafeBytes { try LogRecord(seq: 1, bytes: $0) } == record)
    }
}
