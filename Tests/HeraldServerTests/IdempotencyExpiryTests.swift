import Foundation
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldServer

/// Idempotency keys are kept for a window, then forgotten and removed.
@Suite("serve: idempotency key expiry", .serverThreads)
struct IdempotencyExpiryTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        let milliseconds = Mutex<Int64>(1_760_000_000_000)
        func advance(seconds: Int64) { milliseconds.withLock { $0 += seconds * 1000 } }
        var now: Int64 { milliseconds.withLock { $0 } }
    }

    @Test("within the window a retry is replayed; past it the key runs as new, and expire() removes it")
    func expiry() async throws {
        let directory = TemporaryDirectory("serve-idempotency")
        let clock = ManualClock()
        let server = try await LiveServer(path: directory.path) {
            $0.idempotencySeconds = 60
            $0.storeOptions.clock = { clock.now }
        }
        func post(_ id: Int, key: String) async throws -> (seqs: [Int], replayed: Bool) {
            let response = try await server.request(.POST, "/v1/events", body: notifyLine(id: id), headers: [("Idempotency-Key", key)])
            #expect(response.status == 200, "\(response.body)")
            return (object(response.body)["seqs"] as? [Int] ?? [], response.headers["Idempotent-Replayed"].first == "true")
        }
        func stored() async throws -> Int { try await server.server.host.tables { try $0.count(.idempotency) } }

        #expect(try await post(1, key: "a") == ([1], false))
        clock.advance(seconds: 59)
        #expect(try await post(1, key: "a") == ([1], true))
        #expect(try await post(2, key: "b") == ([2], false))
        // Nothing is past the window yet.
        #expect(try await server.server.idempotency.expire() == 0)
        #expect(try await stored() == 2)

        clock.advance(seconds: 1)
        // "a" (60 s old) is forgotten at lookup even before expire() runs: stored anew.
        #expect(try await post(1, key: "a") == ([3], false))
        // expire() removes what is past the window: neither is, "a" was just written again.
        #expect(try await server.server.idempotency.expire() == 0)
        clock.advance(seconds: 59)
        #expect(try await server.server.idempotency.expire() == 1)  // "b", 60 s old
        #expect(try await stored() == 1)
        clock.advance(seconds: 1)
        #expect(try await server.server.idempotency.expire() == 1)  // "a"
        #expect(try await stored() == 0)
        #expect(try await post(2, key: "b") == ([4], false))
        await server.stop()
    }

    @Test("a window of 0 keeps keys for ever")
    func forever() async throws {
        let directory = TemporaryDirectory("serve-idempotency")
        let clock = ManualClock()
        let server = try await LiveServer(path: directory.path) {
            $0.idempotencySeconds = 0
            $0.storeOptions.clock = { clock.now }
        }
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), headers: [("Idempotency-Key", "k")]).status == 200)
        clock.advance(seconds: 10 * 365 * 86_400)
        #expect(try await server.server.idempotency.expire() == 0)
        let retry = try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), headers: [("Idempotency-Key", "k")])
        #expect(retry.headers["Idempotent-Replayed"].first == "true")
        await server.stop()
    }
}
