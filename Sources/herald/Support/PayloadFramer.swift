/// Splits input lines into payloads: one payload per line (JSONL, base64 bodies), except that
/// a pretty-printed JSON document (its first line is a lone `{` or `[`) is gathered until its
/// braces balance, so `herald ingest payload.json` works on such files too. A truncated JSONL
/// line never starts a gathering, so it is reported alone and the next line stands.
struct PayloadFramer {
    /// The largest payload gathered over several lines before giving up on it.
    static let limit = 8 << 20

    private var pending: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// The line the payload being gathered started on.
    private(set) var startLine = 0

    /// Whether a multi-line payload is being gathered.
    var isGathering: Bool { !pending.isEmpty }

    enum Step {
        /// A complete payload, and the line it started on.
        case payload(ArraySlice<UInt8>, line: Int)
        /// The line was taken into a payload still open.
        case gathering
    }

    /// Feeds one line (without its terminator).
    mutating func feed(_ line: ArraySlice<UInt8>, number: Int) -> Step {
        if pending.isEmpty {
            // The common case: a line that is a whole payload on its own.
            // Without copying the line: its only non-blank byte must be `{` or `[`.
            var content = line.lazy.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }.makeIterator()
            let first = content.next()
            guard first == UInt8(ascii: "{") || first == UInt8(ascii: "["), content.next() == nil else {
                return .payload(line, line: number)
            }
            depth = 1
            inString = false
            escaped = false
            startLine = number
            pending.append(contentsOf: line)
            return .gathering
        }
        pending.append(UInt8(ascii: "\n"))
        pending.append(contentsOf: line)
        scan(line)
        if depth <= 0 || pending.count > Self.limit {
            return .payload(take(), line: startLine)
        }
        return .gathering
    }

    /// What is left at the end of the input: an unfinished payload, if any.
    mutating func finish() -> (ArraySlice<UInt8>, line: Int)? {
        pending.isEmpty ? nil : (take(), startLine)
    }

    private mutating func take() -> ArraySlice<UInt8> {
        defer { pending = [] }
        return pending[...]
    }

    private mutating func scan(_ bytes: ArraySlice<UInt8>) {
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
    }
}
