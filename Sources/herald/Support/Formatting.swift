import Foundation
import HeraldEvents
import HeraldProjection

/// Text renderings shared by the human outputs.
enum Formatting {
    private static let withMilliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let plain = Date.ISO8601FormatStyle()

    /// Milliseconds since the epoch as ISO 8601 UTC with milliseconds (``ISO8601``).
    static func timestamp(milliseconds: Int64) -> String {
        ISO8601.string(milliseconds: milliseconds)
    }

    /// Unix seconds as ISO 8601 in UTC, `YYYY-MM-DDTHH:MM:SSZ`: every time herald prints
    /// carries its zone.
    static func date(seconds: Int64) -> String {
        ISO8601.string(seconds: seconds)
    }

    /// Parses an ISO 8601 time with its zone (what exports write) or `@UNIXSECONDS`, strictly:
    /// milliseconds since the epoch, or `nil` (no relative forms: an export's times are absolute).
    static func parseISO(_ text: String) -> Int64? {
        if text.hasPrefix("@"), let seconds = Int64(text.dropFirst()) {
            let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
            return overflow ? nil : milliseconds
        }
        guard let date = (try? withMilliseconds.parse(text)) ?? (try? plain.parse(text)) else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Parses `--at` style times, returning milliseconds since the epoch:
    /// - ISO 8601 with a zone (`2026-11-21T10:00:00Z`, `…+01:00`, fractional seconds too);
    /// - a date and time without a zone, taken as UTC (`2026-11-21T10:00`, `2026-11-21 10:00:00`);
    /// - a date alone, the start of that day in UTC (`2026-11-24`);
    /// - `now`, `today` and `yesterday` (the start of the day, UTC);
    /// - a time ago: `-90s`, `-15m`, `-1h`, `-2d`, `-1w`;
    /// - Unix seconds prefixed with `@` (`@1763719200`).
    static func parseTime(_ text: String, now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) -> Int64? {
        let dayMilliseconds: Int64 = 86_400_000
        switch text {
        case "now": return now
        case "today": return now - now % dayMilliseconds
        case "yesterday": return now - now % dayMilliseconds - dayMilliseconds
        default: break
        }
        if text.hasPrefix("@"), let seconds = Int64(text.dropFirst()) {
            let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
            return overflow ? nil : milliseconds
        }
        if text.hasPrefix("-"), let unit = text.last, let count = Int64(text.dropFirst().dropLast()), count >= 0 {
            let seconds: Int64? = switch unit {
            case "s": 1
            case "m": 60
            case "h": 3_600
            case "d": 86_400
            case "w": 604_800
            default: nil
            }
            guard let seconds else { return nil }
            let (ago, overflow) = count.multipliedReportingOverflow(by: seconds * 1000)
            return overflow ? nil : now - ago
        }
        if let date = (try? withMilliseconds.parse(text)) ?? (try? plain.parse(text)) {
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        // No zone: UTC. A date alone is the start of its day.
        var normalized = text.replacingOccurrences(of: " ", with: "T")
        if normalized.count == 10 { normalized += "T00:00:00" }
        if normalized.count == 16 { normalized += ":00" }
        if let date = (try? withMilliseconds.parse(normalized + "Z")) ?? (try? plain.parse(normalized + "Z")) {
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        return nil
    }

    /// One line describing an event, for tables.
    static func summary(_ event: Event) -> String {
        switch event.payload {
        case .notify(let n):
            var text = "notify \(n.kind.rawValue) \(n.chat) #\(n.id)"
            if n.partial { text += " (partial)" }
            text += " sent \(date(seconds: n.date))"
            if n.silent { text += " (silent)" }
            if n.unreadOnly { text += " (unread only)" }
            if let title = n.title { text += " \"\(clip(title))\"" }
            return text
        case .edit(let e): return "edit \(e.kind.rawValue) \(e.chat) #\(e.id)"
        case .read(let chat, let maxId): return "read \(chat) up to #\(maxId)"
        case .delete(let ids, let chat): return "delete \(ids.map { "#\($0)" }.joined(separator: ",")) in \(chat ?? "every chat")"
        case .clearHistory(let chat, let maxId): return "delete \(chat)'s history up to #\(maxId)"
        case .readAll(let chat): return "readAll \(chat ?? "every chat")"
        case .readMentions(let chat, let ids):
            return "readMentions \(chat) " + (ids.map { $0.map { "#\($0)" }.joined(separator: ",") } ?? "every mention")
        case .tick(let now): return "tick \(date(seconds: now))"
        case .readReactions(let chat, let ids): return "readReactions \(chat) \(ids.map { "#\($0)" }.joined(separator: ","))"
        case .endCall(let chat, let id): return "endCall \(chat) #\(id)"
        case .dismiss(let id): return "dismiss notification \(id)"
        case .dismissGroup(let group, let max): return "dismissGroup \(group)" + (max.map { " up to notification \($0)" } ?? "")
        case .options(let count, let size):
            return "options" + (count.map { " groupCountMax=\($0)" } ?? "") + (size.map { " groupSizeMax=\($0)" } ?? "")
        case .chatSettings(let s):
            var parts: [String] = []
            if let v = s.muted {
                parts.append("muted=\(v)")
            } else if let until = s.mutedUntil {
                parts.append("mutedUntil=\(date(seconds: until))")
            }
            if let v = s.disableMentions { parts.append("disableMentions=\(v)") }
            if let v = s.disablePinned { parts.append("disablePinned=\(v)") }
            return "chatSettings \(s.chat) \(parts.joined(separator: " "))"
        case .revoke: return "revoke"
        case .note(let source, let reason): return "note" + (source.map { " [\($0)]" } ?? "") + (reason.map { " \(clip($0))" } ?? "")
        }
    }

    /// A file name (or any text) for a one-line message: control characters, which could
    /// break the line or forge another one (`FILE:LINE` of a name holding a newline), are
    /// written as escapes (`\n`, `\t`, `\u{1B}`), and so is a backslash.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Cuts long text for one-line displays.
    static func clip(_ text: String, _ limit: Int = 40) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count <= limit ? flat : String(flat.prefix(limit - 1)) + "…"
    }

    /// One line for a notification.
    static func notification(_ n: HeraldProjection.HeraldNotification) -> String {
        var text = "\(n.id)  \(n.kind.rawValue) #\(n.objectId)  \(date(seconds: n.date))"
        let content = [n.title, n.body].compactMap { $0 }.joined(separator: ": ")
        if !content.isEmpty { text += "  " + clip(content, 60) }
        if n.partial { text += Terminal.styled("  (partial: push content only)", .dim) }
        return text
    }
}
