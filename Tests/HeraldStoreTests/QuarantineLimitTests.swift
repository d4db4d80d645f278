import Foundation
import LMDB
import Testing
import HeraldTestSupport

@testable import HeraldStore

@Suite("Quarantine limit")
struct QuarantineLimitTests {
    func entry(_ index: Int, bytes: Int) -> QuarantinedPayload {
        QuarantinedPayload(
            receivedAt: Int64(index), format: "webpush", input: "http", line: 1, reason: "entry \(index)",
            raw: Array(repeating: UInt8(truncatingIfNeeded: index), count: bytes))
    }

    @Test("past the limit the oldest entries go first, in the same commit; the newest stay; ids are never reused")
    func oldestDroppedFirst() throws {
        let dir = TemporaryDirectory()
        var options = fastOptions()
        options.quarantineLimitBytes = 32 << 10
        let store = try Store(path: dir.path, options: options)
        var dropped = 0
        for index in 1...200 {
            let kept = try store.quarantine.addWithinLimit([entry(index, bytes: 700)])
            #expect(kept.ids == [UInt64(index)])
            dropped += kept.dropped
        }
        let entries = try store.quarantine.all()
        #expect(dropped > 0 && dropped + entries.count == 200)
        // What is left is the newest entries, contiguous up to the last one given.
        #expect(entries.map(\.id) == Array(UInt64(dropped + 1)...200))
        #expect(entries.last?.raw == entry(200, bytes: 700).raw)
        let quarantineBytes = try store.environment.read { txn in try txn.bytes(try #require(try store.existingAuxiliary(.quarantine))) }
        #expect(quarantineBytes <= 32 << 10)
        #expect(entries.count * 700 > 16 << 10, "kept \(entries.count) entries")

        // A batch larger than the limit is kept whole: only older entries are dropped for it.
        let batch = try store.quarantine.addWithinLimit((201...260).map { entry($0, bytes: 700) })
        #expect(batch.ids == Array(201...260))
        #expect(try store.quarantine.all().map(\.id) == Array(201...260))
        // Without a limit nothing is dropped.
        let unlimited = try Store(path: dir.child("other"), options: fastOptions())
        for index in 1...100 { #expect(try unlimited.quarantine.addWithinLimit([entry(index, bytes: 700)]).dropped == 0) }
        #expect(try unlimited.quarantine.all().count == 100)
    }
}
