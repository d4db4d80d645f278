import Foundation
import HeraldTestSupport
import Testing

/// The test run's own machinery (in HeraldTestSupport): the hang watchdog and the executor
/// the server tests run on.
@Suite("test support")
struct TestSupportTests {
    @Test("the hang watchdog reports a directory with where it was made until it is released")
    func watchdogReportsLiveDirectories() {
        let watchdog = HangWatchdog(limit: .seconds(3_600))
        watchdog.begin("/tmp/a", at: "ATests.swift:10")
        watchdog.begin("/tmp/b", at: "BTests.swift:20")
        let both = watchdog.older(than: .zero)
        #expect(both.count == 2)
        #expect(both[0].hasPrefix("ATests.swift:10 (") && both[1].hasPrefix("BTests.swift:20 ("))
        #expect(watchdog.older(than: .seconds(60)).isEmpty)
        watchdog.end("/tmp/a")
        #expect(watchdog.older(than: .zero).map { $0.prefix(15) } == ["BTests.swift:20"])
        watchdog.end("/tmp/b")
        #expect(watchdog.older(than: .zero).isEmpty)
    }

    @Test("a growing executor starts a thread for a job that arrives while every thread blocks")
    func executorGrows() async {
        let executor = ThreadExecutor(threads: 1, growingTo: 4, name: "test.grow")
        let gate = DispatchSemaphore(value: 0)
        // Three jobs wait (30 s at most) for the fourth, queued last and so run last, to open
        // the gate: on fewer than four threads, they time out.
        let opened = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 { group.addTask(executorPreference: executor) { Self.wait(for: gate) } }
            group.addTask(executorPreference: executor) {
                for _ in 0..<3 { gate.signal() }
                return true
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(opened == 4)
        #expect(executor.threadCount == 4)
    }

    static func wait(for semaphore: DispatchSemaphore) -> Bool {
        semaphore.wait(timeout: .now() + 30) == .success
    }
}
