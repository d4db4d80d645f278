import Foundation
import Synchronization

/// Ends a test run that hangs, naming where.
///
/// A test that waits for ever would otherwise hold the run until CI's own time limit, and
/// print nothing. Every ``TemporaryDirectory`` is recorded here, with the file and line that
/// made it, until it is released (nearly every test makes one and releases it as it ends). A
/// thread looks every 30 s; once a directory is older than ``limit``, it prints each one
/// older than five minutes, oldest first, and exits the test process with status 1.
public final class HangWatchdog: Sendable {
    /// The watchdog of this process (made with the first directory).
    public static let shared = HangWatchdog(limit: .seconds(40 * 60))

    /// How long a directory may live before the run is taken to hang.
    public let limit: Duration
    private let live = Mutex<[String: (site: String, since: ContinuousClock.Instant)]>([:])

    /// A watchdog with a thread of its own, which runs for the life of the process.
    public init(limit: Duration) {
        self.limit = limit
        let thread = Thread { [self] in watch() }
        thread.name = "test.hang-watchdog"
        thread.start()
    }

    /// Records that the test at `site` made the directory `path`.
    public func begin(_ path: String, at site: String) {
        live.withLock { $0[path] = (site, .now) }
    }

    /// Records that the directory `path` was released.
    public func end(_ path: String) {
        _ = live.withLock { $0.removeValue(forKey: path) }
    }

    /// The directories older than `age`, oldest first, as "site (N s)".
    public func older(than age: Duration) -> [String] {
        let now = ContinuousClock.now
        return live.withLock { live in
            live.values.filter { now - $0.since > age }.sorted { $0.since < $1.since }
                .map { "\($0.site) (\(Int((now - $0.since).components.seconds)) s)" }
        }
    }

    private func watch() {
        while true {
            Thread.sleep(forTimeInterval: 30)
            guard !older(than: limit).isEmpty else { continue }
            let report = older(than: .seconds(300)).map { "  " + $0 }.joined(separator: "\n")
            FileHandle.standardError.write(Data("""
                error: the test run looks hung: a test has held its temporary directory for over \
                \(limit.components.seconds / 60) minutes. Every test holding one for over five minutes \
                (where it was made, for how long):
                \(report)
                error: ending the test process (exit 1)

                """.utf8))
            exit(1)
        }
    }
}
