import Foundation
import HeraldEvents
import HeraldStore
import Testing
import HeraldTestSupport

/// The store's subsystems through their own properties (`store.keyring`, `store.quarantine`,
/// `store.auditIndex`, `store.snapshots`), against real LMDB in temporary directories, each
/// with the error it gives a store that cannot serve it.
@Suite("Store subsystems")
struct StorePartsTests {
    private func notify(_ account: String, id: Int64) -> (Event, Source) {
        (Event(account: account, .notify(.init(
            chat: "user:5", kind: .message, id: id, date: 1_754_385_290, title: "Alice", body: "hi \(id)"))), .library)
    }

    private func readOnly() -> Store.Options {
        var options = fastOptions()
        options.readOnly = true
        return options
    }

    private func entry(_ line: Int, bytes: Int = 1) -> QuarantinedPayload {
        QuarantinedPayload(receivedAt: 1_754_385_290_000, format: "fcm", input: "in.jsonl", line: line, reason: "missing `title`",
                           account: "tg:1", raw: Array(repeating: UInt8(line % 251), count: bytes))
    }

    /// Whether `body` throws a ``StoreError`` with `code` naming `path`.
    private func throwsStoreError(_ code: StoreError.Code, path: String, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let error as StoreError {
            return error.code == code && error.path == path
        } catch {
            return false
        }
    }

    // MARK: Keyring

    @Test("keyring: add, add again, rebind, list by id and remove, kept across reopens")
    func keyring() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path, options: fastOptions())
            #expect(try store.keyring.all().isEmpty)
            try store.keyring.add(StoredKey(id: 9, account: "tg:2", bytes: [9, 9]))
            #expect(try store.keyring.add(StoredKey(id: -3, account: "tg:1", bytes: [1, 2, 3]), rebind: false))
            #expect(try store.keyring.add(StoredKey(id: -3, account: "tg:1", bytes: [4]), rebind: false) == false,
                    "the same key for the same account changes nothing")
            #expect(try store.keyring.all().first { $0.id == -3 }?.bytes == [1, 2, 3])
            #expect(try store.keyring.add(StoredKey(id: 9, account: "tg:1", bytes: [7]), rebind: true))
        }
        let store = try Store(path: dir.path, options: fastOptions())
        // By id as the store orders them: the key's 64 bits, big-endian, so -3 comes last.
        #expect(try store.keyring.all() == [
            StoredKey(id: 9, account: "tg:1", bytes: [7]), StoredKey(id: -3, account: "tg:1", bytes: [1, 2, 3]),
        ])
        #expect(try store.keyring.remove(id: 9))
        #expect(try store.keyring.remove(id: 9) == false)
        #expect(try store.keyring.all().map(\.id) == [-3])
    }

    @Test("keyring: a key bound to another account is refused without rebind, naming that account")
    func keyringBoundElsewhere() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        try store.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: [1]), rebind: false)
        do {
            try store.keyring.add(StoredKey(id: 7, account: "tg:2", bytes: [2]), rebind: false)
            Issue.record("a key bound to tg:1 was rebound to tg:2 without rebind")
        } catch let error as StoreError {
            #expect(error.code == .keyBound)
            #expect(error.keyID == 7 && error.account == "tg:1" && error.path == dir.path)
        }
        #expect(try store.keyring.all() == [StoredKey(id: 7, account: "tg:1", bytes: [1])])
    }

    @Test("keyring: read-only and closed stores refuse writes; a closed one refuses reads too")
    func keyringRefusals() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        try store.keyring.add(StoredKey(id: 1, account: "", bytes: [1]))
        let reader = try Store(path: dir.path, options: readOnly())
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.keyring.add(StoredKey(id: 2, account: "", bytes: [2])) })
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.keyring.remove(id: 1) })
        #expect(try reader.keyring.all().map(\.id) == [1])
        store.close()
        #expect(throwsStoreError(.closed, path: dir.path) { try store.keyring.add(StoredKey(id: 2, account: "", bytes: [2]), rebind: true) })
        #expect(throwsStoreError(.closed, path: dir.path) { try store.keyring.remove(id: 1) })
        #expect(throwsStoreError(.closed, path: dir.path) { _ = try store.keyring.all() }, "the environment was released")
        #expect(try reader.keyring.all().map(\.id) == [1])
    }

    @Test("keyring: a write through a store used once (a temporary) is made")
    func keyringOfTemporaryStore() throws {
        let dir = TemporaryDirectory()
        try Store(path: dir.path, options: fastOptions()).keyring.add(StoredKey(id: 5, account: "tg:1", bytes: [5]))
        #expect(try Store(path: dir.path, options: fastOptions()).keyring.all().map(\.id) == [5])
    }

    // MARK: Quarantine

    @Test("quarantine: add gives ids in order, all lists oldest first, remove deletes one")
    func quarantine() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        #expect(try store.quarantine.all().isEmpty)
        #expect(try store.quarantine.add([entry(1), entry(2)]) == [1, 2])
        #expect(try store.quarantine.add([]) == [])
        let third = try store.quarantine.addWithinLimit([entry(3)])
        #expect(third.ids == [3] && third.dropped == 0)
        var expected = [entry(1), entry(2), entry(3)]
        for index in expected.indices { expected[index].id = UInt64(index + 1) }
        #expect(try store.quarantine.all() == expected)
        #expect(try store.quarantine.remove(id: 2))
        #expect(try store.quarantine.remove(id: 2) == false)
        #expect(try store.quarantine.all().map(\.id) == [1, 3])
        #expect(try store.statistics().quarantined == 2)
    }

    @Test("quarantine: past the limit the oldest entries go, never those just added")
    func quarantineLimit() throws {
        let dir = TemporaryDirectory()
        var options = fastOptions()
        options.quarantineLimitBytes = 64 * 1024
        let store = try Store(path: dir.path, options: options)
        var dropped = 0
        for line in 1...200 { dropped += try store.quarantine.addWithinLimit([entry(line, bytes: 1_000)]).dropped }
        let kept = try store.quarantine.all().map(\.id)
        #expect(dropped > 0 && dropped + kept.count == 200)
        #expect(kept == Array(UInt64(201 - kept.count)...200), "the newest are kept, in order")
        let big = try store.quarantine.addWithinLimit((201...300).map { entry($0, bytes: 1_000) })
        #expect(try store.quarantine.all().map(\.id) == Array(201...300), "a batch over the limit keeps itself whole")
        #expect(big.ids == Array(201...300) && big.dropped == kept.count)
    }

    @Test("quarantine: read-only and closed stores refuse writes; an empty add needs none")
    func quarantineRefusals() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        try store.quarantine.add([entry(1)])
        let reader = try Store(path: dir.path, options: readOnly())
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.quarantine.add([entry(2)]) })
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.quarantine.remove(id: 1) })
        #expect(try reader.quarantine.addWithinLimit([]).ids.isEmpty)
        #expect(try reader.quarantine.all().map(\.id) == [1])
        store.close()
        #expect(throwsStoreError(.closed, path: dir.path) { _ = try store.quarantine.addWithinLimit([entry(2)]) })
        #expect(throwsStoreError(.closed, path: dir.path) { try store.quarantine.remove(id: 1) })
        #expect(throwsStoreError(.closed, path: dir.path) { _ = try store.quarantine.all() }, "the environment was released")
        #expect(try reader.quarantine.all().map(\.id) == [1])
    }

    // MARK: Audit index

    @Test("audit index: built when asked, kept up, counted and dropped")
    func auditIndex() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        _ = try store.append(contentsOf: (1...40).map { notify($0 % 2 == 0 ? "tg:1" : "tg:2", id: Int64($0)) })
        #expect(try store.auditIndex.through() == 0)
        #expect(try store.auditIndex.catchUp() == 0, "no index, none asked for")
        let none = try store.auditIndex.statistics()
        #expect(none.through == 0 && none.buckets == 0 && none.seqChunks == 0 && none.bytes == 0)
        #expect(try store.auditIndex.catchUp(starting: true) == 40)
        let built = try store.auditIndex.statistics()
        #expect(built.through == 40 && built.buckets > 0 && built.seqChunks == 2 && built.bytes > 0)
        #expect(try store.statistics().auditIndex == built)
        _ = try store.append(contentsOf: [notify("tg:1", id: 41)])
        #expect(try store.auditIndex.through() == 40)
        #expect(try store.auditIndex.catchUp() == 41, "an index that exists is kept up")
        #expect(try store.auditIndex.statistics().seqChunks == 3)
        let report = try store.auditReport(account: "tg:1", target: .notification(1), listingUnchanged: false)
        #expect(try store.auditIndex.report(account: "tg:1", target: .notification(1)) == report, "the index answered")
        try store.auditIndex.drop()
        #expect(try store.auditIndex.through() == 0)
        #expect(try store.auditIndex.statistics().through == 0 && store.statistics().auditIndex == nil)
        #expect(try store.auditIndex.catchUp() == 0, "a dropped index is not rebuilt unless asked")
    }

    @Test("audit index: read-only and closed stores refuse to build or drop it")
    func auditIndexRefusals() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        _ = try store.append(contentsOf: (1...5).map { notify("tg:1", id: Int64($0)) })
        try store.auditIndex.catchUp(starting: true)
        let reader = try Store(path: dir.path, options: readOnly())
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.auditIndex.catchUp(starting: true) })
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.auditIndex.drop() })
        #expect(try reader.auditIndex.through() == 5)
        store.close()
        #expect(throwsStoreError(.closed, path: dir.path) { try store.auditIndex.catchUp() })
        #expect(throwsStoreError(.closed, path: dir.path) { try store.auditIndex.drop() })
        #expect(throwsStoreError(.closed, path: dir.path) { _ = try store.auditIndex.statistics() }, "the environment was released")
        #expect(try reader.auditIndex.statistics().through == 5)
    }

    // MARK: Snapshots

    @Test("snapshots: seqs lists what snapshot() and the background writer stored, oldest first")
    func snapshots() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions(snapshotInterval: 10))
        #expect(try store.snapshots.seqs().isEmpty)
        _ = try store.append(contentsOf: (1...4).map { notify("tg:1", id: Int64($0)) })
        #expect(try store.snapshot() == 4)
        _ = try store.append(contentsOf: (5...14).map { notify("tg:1", id: Int64($0)) })
        store.snapshots.waitUntilIdle()
        #expect(try store.snapshots.seqs() == [4, 14])
        #expect(try store.statistics().snapshotSeqs == [14, 4])
        let reader = try Store(path: dir.path, options: readOnly())
        #expect(try reader.snapshots.seqs() == [4, 14])
    }

    @Test("snapshots: a read-only or closed store takes none")
    func snapshotRefusals() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.path, options: fastOptions())
        _ = try store.append(contentsOf: [notify("tg:1", id: 1)])
        let reader = try Store(path: dir.path, options: readOnly())
        #expect(throwsStoreError(.readOnly, path: dir.path) { try reader.snapshot() })
        store.close()
        #expect(throwsStoreError(.closed, path: dir.path) { try store.snapshot() })
        store.snapshots.waitUntilIdle()
        #expect(try reader.snapshots.seqs().isEmpty)
    }
}
