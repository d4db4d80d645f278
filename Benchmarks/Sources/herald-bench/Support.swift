import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// User plus system CPU seconds of this process (the sampler thread's share included).
func cpuTime() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Prints a progress line on stderr (stdout carries only the table or a child's result).
func note(_ text: String) {
    FileHandle.standardError.write(Data(("· " + text + "\n").utf8))
}

/// A value of `/proc/self/status` in bytes (`VmHWM`, `VmRSS`, `RssAnon`, …), or 0.
func procStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
        return (Int(String(digits)) ?? 0) * 1024
    }
    return 0
}

/// Samples `RssAnon` (the heap and other private memory, not the mapped log file) on a
/// background thread and keeps the peak.
final class AnonymousMemorySampler: @unchecked Sendable {
    // @unchecked: `peak` and `running` are only touched with `lock` held.
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private var thread: Thread?

    init(interval: Double = 0.01) {
        peak = procStatus("RssAnon")
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let value = procStatus("RssAnon")
                lock.withLock { peak = max(peak, value) }
                Thread.sleep(forTimeInterval: interval)
            }
        }
        self.thread = thread
        thread.start()
    }

    /// Stops sampling and returns the peak, including one last sample.
    func stop() -> Int {
        let last = procStatus("RssAnon")
        return lock.withLock {
            running = false
            peak = max(peak, last)
            return peak
        }
    }
}

/// The result of a child process.
struct ChildResult {
    var status: Int32
    var output: String
    var seconds: Double
}

/// Runs `executable` with `arguments`, capturing stdout (stderr passes through), timing it.
func runChild(_ executable: String, _ arguments: [String], stdin: String? = nil) throws -> ChildResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
    let start = now()
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = now() - start
    return ChildResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self), seconds: seconds)
}

/// `key=value` pairs of a child's one-line report.
func parsePairs(_ text: String) -> [String: String] {
    var pairs: [String: String] = [:]
    for token in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
        let parts = token.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { pairs[String(parts[0])] = String(parts[1]) }
    }
    return pairs
}

/// The first number after `marker` in `text` (for the C baselines' output).
func number(after marker: String, in text: String) -> Double? {
    guard let range = text.range(of: marker) else { return nil }
    let rest = text[range.upperBound...].drop { $0 == " " }
    return Double(String(rest.prefix { $0.isNumber || $0 == "." }))
}

/// Removes a directory tree, ignoring errors.
func removeTree(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Total size of the regular files in a directory.
func directorySize(_ path: String) -> Int {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return 0 }
    return names.reduce(0) { total, name in
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
        return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
}

extension Double {
    /// A rate like `1.23 M/s`, `45.6 k/s`.
    var rate: String {
        if self >= 1e6 { return String(format: "%.2f M/s", self / 1e6) }
        if self >= 1e3 { return String(format: "%.1f k/s", self / 1e3) }
        return String(format: "%.0f /s", self)
    }

    var fixed2: String { String(format: "%.2f", self) }
}

extension Int {
    /// A count like `10 M`, `200 k`.
    var short: String {
        if self >= 1_000_000 && self % 1_000_000 == 0 { return "\(self / 1_000_000) M" }
        if self >= 1_000 && self % 1_000 == 0 { return "\(self / 1_000) k" }
        return "\(self)"
    }
}
