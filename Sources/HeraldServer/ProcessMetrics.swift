import Prometheus
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's own figures under the names Prometheus client libraries use
/// (`process_resident_memory_bytes`, `process_open_fds`, `process_cpu_seconds_total`), read
/// at each scrape: from `/proc/self` where there is one, and `getrusage` for CPU time.
final class ProcessMetrics: Sendable {
    let residentMemory: Gauge
    let openDescriptors: Gauge
    let cpuSeconds: Counter
    /// The CPU seconds already added to ``cpuSeconds`` (a counter only goes up by deltas).
    private let countedCPUSeconds = Mutex(0.0)

    init(registry: PrometheusCollectorRegistry) {
        residentMemory = registry.makeGauge(name: "process_resident_memory_bytes", labels: [], help: "Resident memory size in bytes")
        openDescriptors = registry.makeGauge(name: "process_open_fds", labels: [], help: "Number of open file descriptors")
        cpuSeconds = registry.makeCounter(name: "process_cpu_seconds_total", labels: [], help: "Total user and system CPU time spent in seconds")
    }

    /// Reads the figures now.
    func update() {
        if let resident = Self.residentBytes() { residentMemory.set(Double(resident)) }
        if let count = Self.openDescriptorCount() { openDescriptors.set(Double(count)) }
        var usage = rusage()
        #if canImport(Glibc)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        let total = seconds(usage.ru_utime) + seconds(usage.ru_stime)
        let delta = countedCPUSeconds.withLock { counted -> Double in
            let delta = max(0, total - counted)
            counted += delta
            return delta
        }
        if delta > 0 { cpuSeconds.increment(by: delta) }
    }

    /// Resident pages (`/proc/self/statm`, second field) times the page size.
    static func residentBytes() -> Int? {
        guard let file = fopen("/proc/self/statm", "r") else { return nil }
        defer { fclose(file) }
        var size = 0, resident = 0
        guard readTwoNumbers(file, &size, &resident) else { return nil }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Reads two whitespace-separated decimal numbers.
    private static func readTwoNumbers(_ file: UnsafeMutablePointer<FILE>, _ first: inout Int, _ second: inout Int) -> Bool {
        var line = [CChar](repeating: 0, count: 256)
        guard fgets(&line, Int32(line.count), file) != nil else { return false }
        let fields = String(cString: line).split(separator: " ")
        guard fields.count >= 2, let a = Int(fields[0]), let b = Int(fields[1]) else { return false }
        first = a
        second = b
        return true
    }

    /// The entries of `/proc/self/fd`, less the one reading it.
    static func openDescriptorCount() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }
}
