import Foundation
import HeraldTestSupport
import Testing

/// The test run's own machinery (in HeraldTestSupport): the hang watchdog and the executor
/// the server tests run on.
@Suite("test support", .testThreads)
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
        // Three jobs block until the fourth (queued last, so run last) opens the gate: on one
        // thread, or three, this would never end.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask(executorPreference: executor) { Self.block(on: gate) } }
            group.addTask(executorPreference: executor) { for _ in 0..<3 { gate.signal() } }
        }
        #expect(executor.threadCount == 4)
    }

    static func block(on semaphore: DispatchSemaphore) { semaphore.wait() }
}
