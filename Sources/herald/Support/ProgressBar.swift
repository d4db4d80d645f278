import Foundation

/// A one-line progress indicator on stderr, shown only when stderr is a terminal.
final class ProgressBar {
    private let enabled: Bool
    private let label: String
    private var lastDraw = Date.distantPast
    private let started = Date()

    init(enabled: Bool, label: String) {
        self.enabled = enabled
        self.label = label
    }

    /// Redraws at most ten times a second.
    func update(_ status: String, fraction: Double? = nil) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        var text = "\r\u{1B}[2K\(label): "
        let elapsed = now.timeIntervalSince(started)
        if let fraction {
            let width = 30
            let filled = Int((fraction.clamped * Double(width)).rounded())
            text += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            text += String(format: "%3.0f%% ", fraction.clamped * 100)
        }
        text += status + String(format: " (%.1fs", elapsed)
        if let fraction, fraction > 0.01, fraction < 1 {
            text += ", about " + Self.duration(elapsed / fraction.clamped - elapsed) + " left"
        }
        text += ")"
        Terminal.write(text, to: STDERR_FILENO)
    }

    /// `42s`, `3m 05s`, `1h 12m`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total)s" }
        if total < 3_600 { return String(format: "%dm %02ds", total / 60, total % 60) }
        return String(format: "%dh %02dm", total / 3_600, (total % 3_600) / 60)
    }

    /// Clears the line.
    func finish() {
        guard enabled, lastDraw != .distantPast else { return }
        Terminal.write("\r\u{1B}[2K", to: STDERR_FILENO)
    }
}

extension Double {
    fileprivate var clamped: Double { Swift.min(1, Swift.max(0, self)) }
}
