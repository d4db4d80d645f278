import HeraldTestSupport
import Testing

/// The test run's hang watchdog (in HeraldTestSupport): what it would report.
@Suite("test support: the hang watchdog")
struct HangWatchdogTests {
    @Test("a directory is reported with where it was made until it is released; none older than the limit")
    func reportsLiveDirectories() {
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
}
