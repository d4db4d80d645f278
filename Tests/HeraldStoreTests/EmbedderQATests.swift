import Foundation
import HeraldEvents
import HeraldProjection
@testable import HeraldStore
import Synchronization
import Testing

/// The library API as an app that embeds the store uses it: read-only stores, followers,
/// refreshes, options that leave the projection empty, invalid input.
@Suite("Embedder QA")
struct EmbedderQATests {
    private func notify(_ account: String = "tg:1", id: Int64, body: String = "hi") -> Event {
        Event(account: account, .notify(.init(
            chat: "user:5", kind: .message, id: id, date: 1_754_385_290, title: "Alice", body: body)))
    }

    private func readOnly() -> Store.Options {
        var options = Store.Options()
        options.readOnly = true
        return options
    }

    @Test("removing a key or a quarantined payload from a read-only store throws, not traps")
    func readOnlyRemovals() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(path: dir.path)
            try store.addKey(StoredKey(id: 7, account: "tg:1", bytes: [1, 2, 3]))
            try store.quarantine([QuarantinedPayload(receivedAt: 1, format: "x", input: "-", line: 0, reason: "r", raw: [1])])
        }
        let reader = try Store(path: dir.path, options: readOnly())
        for remove in [{ try reader.removeKey(id: 7) }, { try reader.removeQuarantined(id: 1) }] {
            #expect {
                try remove()
            } throws: { error in
                guard case StoreError.readOnly(let path) = error else { return false }
                return path == dir.path
            }
        }
        #expect(try reader.keys().count == 1)
        #expect(try reader.quarantined().count == 1)
    }
}

/// A flag threads share.
private final class Flag: Sendable {
    let value = Atomic(false)
}
