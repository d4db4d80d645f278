import HeraldEvents
import HeraldStore
import HeraldTestSupport
import LMDB
import Testing

/// Stores written before the `digests` index was retired keep it: it is ignored, `verify`
/// says nothing about it, and a purge empties it (schema/log-format.md).
@Suite("retired digests index")
struct RetiredDigestIndexTests {
    static func notify(_ account: String, _ id: Int64) -> (Event, Source) {
        let event = Event(account: account, .notify(.init(chat: "c", kind: .message, id: id, date: 1_700_000_000 + id)))
        return (event, Source(format: "herald", payload: Array("\(account) \(id)".utf8)))
    }

    /// Writes a `digests` database holding every record's digest, and `digestsThrough`, as
    /// earlier versions did.
    static func writeLegacyIndex(at path: String) throws {
        let records = try Store(path: path).history.records()
        let environment = try Environment(path: path)
        let digests = try #require(try environment.openDatabase("digests", create: true))
        let meta = try #require(try environment.openDatabase("meta"))
        try environment.write { txn in
            for record in records {
                try txn.put(digests, key: try #require(record.source.digest), value: SeqKeyBytes.bigEndian(record.seq))
            }
            try txn.put(meta, key: Array("digestsThrough".utf8), value: Array(String(records.count).utf8))
        }
    }

    /// The number of entries in the store's `digests` database, and whether `digestsThrough` is set.
    static func legacyIndex(at path: String) throws -> (entries: Int, through: Bool) {
        let environment = try Environment(path: path)
        let digests = try #require(try environment.openDatabase("digests"))
        let meta = try #require(try environment.openDatabase("meta"))
        return try environment.read { txn in
            (try txn.count(digests), try txn.get(meta, key: Array("digestsThrough".utf8)) != nil)
        }
    }

    @Test("a store with a digests index verifies clean, appends, and loses the index to a purge")
    func leftoverIndex() throws {
        let directory = TemporaryDirectory()
        do {
            let store = try Store(path: directory.path)
            try store.appendBatch([Self.notify("a", 1), Self.notify("b", 2), Self.notify("a", 3)])
        }
        try Self.writeLegacyIndex(at: directory.path)
        #expect(try Self.legacyIndex(at: directory.path) == (3, true))
        do {
            let store = try Store(path: directory.path)
            #expect(try store.verify().isClean)
            #expect(try store.appendBatch([Self.notify("b", 4)]) == 4...4)
            #expect(try store.verify().isClean)
        }
        // Appends leave it as it was.
        #expect(try Self.legacyIndex(at: directory.path) == (3, true))
        _ = try StoreMaintenance(path: directory.path).purge(account: "a")
        #expect(try Self.legacyIndex(at: directory.path) == (0, false))
        let store = try Store(path: directory.path)
        #expect(try store.verify().isClean)
        #expect(try store.history.records().map(\.event.account) == ["b", "b"])
    }
}

/// A seq as the 8 big-endian bytes of the index's values.
private enum SeqKeyBytes {
    static func bigEndian(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }
}
