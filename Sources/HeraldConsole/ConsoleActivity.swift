import Foundation
import Synchronization

/// The last hour of a server's work, by minute, kept in memory for the store page: events
/// appended and requests answered (count, total and slowest time). `herald serve` feeds it;
/// `herald console` builds a ``Series`` from the log's `recorded` times instead.
public final class ConsoleActivity: Sendable {
    /// One minute.
    public struct Minute: Sendable, Hashable {
        /// Unix minute (seconds / 60).
        public var minute: Int64
        public var events = 0
        public var requests = 0
        public var latencyTotal: Double = 0
        public var latencyMax: Double = 0

        public init(minute: Int64) { self.minute = minute }
    }

    /// Sixty minutes ending with the current one, oldest first, and where they came from.
    public struct Series: Sendable {
        public var minutes: [Minute]
        /// Whether request latency was measured (a live server) or not (a copy on disk).
        public var hasRequests: Bool
        /// How the rates were obtained, for the page.
        public var note: String

        public init(minutes: [Minute], hasRequests: Bool, note: String) {
            self.minutes = minutes
            self.hasRequests = hasRequests
            self.note = note
        }
    }

    private let minutes = Mutex<[Int64: Minute]>([:])
    private let now: @Sendable () -> Double

    public init(now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.now = now
    }

    /// Counts `count` events appended now.
    public func events(_ count: Int) {
        update { $0.events += count }
    }

    /// Counts one request answered in `seconds`.
    public func request(seconds: Double) {
        update { minute in
            minute.requests += 1
            minute.latencyTotal += seconds
            minute.latencyMax = max(minute.latencyMax, seconds)
        }
    }

    private func update(_ body: (inout Minute) -> Void) {
        let current = Int64(now() / 60)
        minutes.withLock { table in
            var minute = table[current] ?? Minute(minute: current)
            body(&minute)
            table[current] = minute
            if table.count > 70 { table = table.filter { $0.key > current - 60 } }
        }
    }

    /// The last sixty minutes, empty ones included.
    public func series() -> Series {
        let current = Int64(now() / 60)
        let table = minutes.withLock { $0 }
        let list = (current - 59...current).map { table[$0] ?? Minute(minute: $0) }
        return Series(minutes: list, hasRequests: true, note: "kept in memory by this server since it started")
    }

    /// A series of events only, from the `recorded` times (milliseconds) of the newest records.
    public static func fromRecorded(_ times: [Int64], now: Double, note: String) -> Series {
        let current = Int64(now / 60)
        var counts: [Int64: Int] = [:]
        for time in times { counts[time / 60_000, default: 0] += 1 }
        let list = (current - 59...current).map { minute -> Minute in
            var entry = Minute(minute: minute)
            entry.events = counts[minute] ?? 0
            return entry
        }
        return Series(minutes: list, hasRequests: false, note: note)
    }
}

/// Small inline SVG bar charts: no script, no external file.
enum Chart {
    /// Bars of `values` (one a minute, oldest first), scaled to the largest; the title names
    /// the largest and the sum.
    static func bars(_ values: [Double], label: String, unit: String, format: (Double) -> String) -> String {
        let width = 360.0, height = 64.0
        let top = values.max() ?? 0
        let step = width / Double(max(values.count, 1))
        var svg = "<figure class=\"chart\"><svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"\(HTML.escape(label))\">"
        svg += "<line x1=\"0\" y1=\"\(height - 0.5)\" x2=\"\(width)\" y2=\"\(height - 0.5)\" class=\"axis\"/>"
        for (index, value) in values.enumerated() where value > 0 {
            let h = top > 0 ? max(1, (value / top) * (height - 4)) : 0
            let x = Double(index) * step
            let box = String(format: "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x + 0.5, height - h, max(step - 1, 1), h)
            svg += "<rect \(box)><title>" + HTML.escape("\(60 - index) min ago: \(format(value)) \(unit)") + "</title></rect>"
        }
        svg += "</svg><figcaption>"
        svg += HTML.escape(label)
        svg += " · peak \(HTML.escape(format(top))) \(HTML.escape(unit))</figcaption></figure>"
        return svg
    }
}
