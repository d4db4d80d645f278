import Foundation
import HeraldEvents
import LMDB
import Testing
import HeraldTestSupport

@testable import HeraldStore

/// What escapes the store is a ``StoreError``, whatever failed underneath (LMDB included),
/// and its code and details say what the description says.
@Suite("Store errors")
struct StoreErrorTests {
    let damage = DamageTests()

    /// Runs the store's public operations on the store in `dir` (whatever state it is in)
    /// and returns every error they threw, by operation.
    func errorsOfPublicOperations(_ dir: TemporaryDirectory) -> [(operation: String, error: any Error)] {
        var errors: [(String, any Error)] = []
        let scratch = TemporaryDirectory()
        func attempt(_ operation: String, _ body: () throws -> Void) {
            do { try body() } catch { errors.append((operation, error)) }
        }
        var inspect = fastOptions()
        inspect.replayOnOpen = false
        var readOnly = damage.readOnly()
        readOnly.replayOnOpen = false
        for (name, options) in [("writable", inspect), ("read-only", readOnly)] {
            attempt("open \(name)") {
                let store = try Store(path: dir.path, options: options)
                attempt("records(from:through:) \(name)") { _ = try store.history.records(from: 1, through: 100) }
                attempt("records(from:limit:) \(name)") { _ = try store.history.records(from: 1, limit: 100) }
                attempt("forEachRecord \(name)") { try store.history.forEach { _ in true } }
                attempt("firstSeq \(name)") { _ = try store.history.bounds().firstSeqInLog }
                attempt("committedLastSeq \(name)") { _ = try store.history.bounds().lastSeqInLog }
                attempt("recordCount \(name)") { _ = try store.history.bounds().recordCountInLog }
                attempt("replay \(name)") { _ = try store.replay() }
                attempt("projection(at:) \(name)") { _ = try store.projection(at: 10, useSnapshots: false) }
                attempt("accountNames \(name)") { _ = try store.accountNames() }
                attempt("snapshotSeqs \(name)") { _ = try store.snapshots.seqs() }
                attempt("quarantined \(name)") { _ = try store.quarantine.all() }
                attempt("keys \(name)") { _ = try store.keyring.all() }
                attempt("statistics \(name)") { _ = try store.statistics() }
                attempt("verify \(name)") { _ = try store.verify() }
                store.close()
            }
        }
        attempt("open and replay") { _ = try Store(path: dir.path, options: fastOptions()) }
        attempt("backup") { _ = try StoreMaintenance(path: dir.path).backup(to: scratch.child("backup")) }
        attempt("salvage") { _ = try StoreMaintenance(path: dir.path, options: fastOptions()).salvage(to: scratch.child("salvaged")) }
        attempt("purge") { _ = try StoreMaintenance(path: dir.path, options: fastOptions()).purge(account: "nobody", dryRun: true) }
        attempt("compact") { try StoreMaintenance(path: dir.path, options: fastOptions()).compact() }
        return errors
    }

    /// The first child page number of every B-tree branch page of `path` whose children
    /// are all leaves of the log, with the offset of that number's bytes in the file.
    func logBranchPages(_ path: String) throws -> [(page: Int, firstChildOffset: Int)] {
        let leaves = try damage.logPages(path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        var found: [(Int, Int)] = []
        for page in 2..<bytes.count / 4096 {
            let base = page * 4096
            // The page header: pgno (8 bytes), pad (2), flags (2; P_BRANCH = 1), lower, upper.
            guard u16(base + 10) == 1 else { continue }
            let count = (u16(base + 12) - 16) / 2
            guard count > 1 else { continue }
            // Each node of a branch page starts with the child's page number (lo, hi, flags).
            let children = (0..<count).map { index -> Int in
                let node = base + u16(base + 16 + 2 * index)
                return u16(node) | u16(node + 2) << 16 | u16(node + 4) << 32
            }
            if children.allSatisfy({ leaves[$0] != nil }) { found.append((page, base + u16(base + 16))) }
        }
        return found
    }

    @Test("every error a public Store method throws on a damaged store is a StoreError, LMDB's included")
    func damagedStoresThrowStoreErrors() throws {
        // A branch of the log pointing past the end of the file: the open's own checks (meta
        // pages, file size) pass, and LMDB reports the page as missing (MDB_PAGE_NOTFOUND)
        // when a read reaches it.
        let dir = TemporaryDirectory()
        _ = try damage.makeStore(dir)
        let file = dir.child("data.mdb")
        let branch = try #require(try logBranchPages(file).first)
        try damage.edit(file) { bytes in
            for index in 0..<6 { bytes[branch.firstChildOffset + index] = index < 4 ? 0xFF : 0 }
        }
        let errors = errorsOfPublicOperations(dir)
        for (operation, error) in errors {
            #expect(error is StoreError, "\(operation): \(type(of: error)): \(error)")
        }
        let lmdb = errors.compactMap { ($0.error as? StoreError)?.lmdbError }
        #expect(lmdb.contains { $0.isCorruption }, "\(errors)")
        #expect(errors.contains { $0.operation == "forEachRecord writable" && ($0.error as? StoreError)?.code == .lmdb })
        #expect(errors.contains { "\($0.error)".contains("herald salvage") })

        // Damage the opens find themselves: a file cut short, a stale meta page.
        let truncated = TemporaryDirectory()
        _ = try damage.makeStore(truncated, count: 500)
        try damage.edit(truncated.child("data.mdb")) { $0.removeSubrange((8_192 + 4_096 * 3)...) }
        let stale = TemporaryDirectory()
        try damage.appendOneByOne(stale, count: 100, seed: 5)
        let header = try #require(try DataFile(path: stale.child("data.mdb"))?.header())
        let newest = try #require(header.newest), previous = try #require(header.previous)
        try damage.edit(stale.child("data.mdb")) { bytes in
            let old = Array(bytes[previous.index * 4096..<(previous.index + 1) * 4096])
            bytes.replaceSubrange(newest.index * 4096..<(newest.index + 1) * 4096, with: old)
        }
        for damaged in [truncated, stale] {
            let errors = errorsOfPublicOperations(damaged)
            #expect(!errors.isEmpty)
            for (operation, error) in errors {
                #expect(error is StoreError, "\(operation): \(type(of: error)): \(error)")
            }
        }
    }

    @Test("a code compares, matches as a pattern and names itself; the details are the factory's arguments")
    func codes() throws {
        let error = StoreError.unknownChat(path: "/s", account: "a", chat: "c", chats: ["b", "d"])
        #expect(error.code == .unknownChat && error.code != .unknownAccount)
        #expect("\(error.code)" == "unknownChat")
        #expect(error.path == "/s" && error.account == "a" && error.chat == "c" && error.chats == ["b", "d"])
        #expect(error.seq == nil && error.lmdbError == nil)
        #expect(error.description == "no event of account 'a' in store /s names chat 'c'")
        #expect(error.localizedDescription == error.description)
        var matched = false
        do { throw error } catch StoreError.Code.unknownAccount {
            Issue.record("matched the wrong code")
        } catch StoreError.Code.unknownChat {
            matched = true
        }
        #expect(matched)
        let exported = StoreError.historyExported(path: "/s", origin: 9, files: ["x.gz"])
        #expect(exported.seq == 9 && exported.files == ["x.gz"])
        #expect(exported.description.hasPrefix("store /s: history up to seq 9 expired under archive retention and was exported before removal, to x.gz; "))
        let bound = StoreError.keyBound(path: "/s", id: 7, account: "")
        #expect(bound.keyID == 7 && bound.description == "Telegram key 7 is bound to any account in store /s; rebind it to move it")
        let batch = StoreError.invalidEvent(index: 2, EventError(field: "maxId", reason: "must be positive"))
        #expect(batch.batchIndex == 2 && batch.eventError?.field == "maxId" && batch.path == nil)
        #expect(batch.description.hasPrefix("event 3 of the batch is invalid: "))
    }
}
