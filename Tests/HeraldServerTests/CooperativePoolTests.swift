import Foundation
import HeraldTestSupport
import Synchronization
import Testing

/// A server under test needs no free thread of the cooperative pool to answer or to stop:
/// ordinary tests run there, and may hold it.
@Suite("serve: without the cooperative pool", .serverThreads)
struct CooperativePoolTests {
    @Test("a server starts, answers, streams updates and stops while every thread of the cooperative pool is held")
    func serverAnswersWithoutPool() async throws {
        let directory = TemporaryDirectory("serve")
        let hold = PoolHold()
        _ = hold.holdEveryThread()
        let server: LiveServer
        do {
            server = try await LiveServer(path: directory.path)
        } catch {
            hold.release()
            throw error
        }
        var failure: (any Error)?
        do {
            #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1)).status == 200)
            #expect(try await server.request(.GET, "/v1/accounts/tg:1/state").status == 200)
            var stream = try await ReadEndpointTests().openStream(server, account: "tg:1", lastEventID: 0, timeout: 30)
            #expect(try await stream.next(1).map(\.id) == [1])
            #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 2)).status == 200)
            #expect(try await stream.next(1).map(\.id) == [2])
        } catch {
            failure = error
        }
        await server.stop()
        hold.release()
        if let failure { throw failure }
    }
}

/// Jobs that block the threads of the cooperative pool until released.
final class PoolHold: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)
    private let spawned = Mutex(0)
    private let running = Mutex(0)

    /// Starts blocking jobs on the pool until one has not started after half a second: the
    /// pool is then full (that one starts when a thread frees). Returns how many run.
    func holdEveryThread(limit: Int = 64) -> Int {
        for _ in 0..<limit {
            spawned.withLock { $0 += 1 }
            Task.detached { [self] in
                running.withLock { $0 += 1 }
                started.signal()
                gate.wait()
            }
            if started.wait(timeout: .now() + 0.5) == .timedOut { break }
        }
        return running.withLock { $0 }
    }

    /// Releases every job.
    func release() {
        for _ in 0..<spawned.withLock({ $0 }) { gate.signal() }
    }
}
