import HeraldIngest

/// Splits input lines into payloads: one payload per line (JSONL, base64 bodies), except for
/// pretty-printed JSON documents, so `herald ingest payload.json` works on such files too.
///
/// The rule, with blanks and a leading UTF-8 byte-order mark ignored when lines are compared:
/// - a document begins at a line that is just `{` or `[`, and ends at the line that is just
///   the matching `}` or `]` at the same nesting (brackets inside strings do not count, and
///   a string never spans lines, as in JSON);
/// - a document that ends so and parses as JSON is one payload, named by its first line;
/// - anything else (the nesting falls back to the opening level on another line, a closer of
///   the other kind, more than ``limit`` bytes, the end of the input first, or a document
///   that does not parse) falls back to its lines one by one, each with its own line number,
///   except that a complete, well-formed document found inside is still one payload. So a
///   stray `{` costs its own line and never swallows the good lines after it.
struct PayloadFramer {
    /// The largest payload gathered over several lines before giving up on it.
    static let limit = Ingest.maxPayloadBytes

    /// A payload and the line it starts on.
    typealias Framed = (payload: ArraySlice<UInt8>, line: Int)

    enum Step {
        /// A complete payload, and the line it started on.
        case payload(ArraySlice<UInt8>, line: Int)
        /// Several payloads at once: the lines of a gathering that was not one document.
        case payloads([Framed])
        /// The line was taken into a document still open.
        case gathering
    }

    /// A line that opens a document candidate, with the nesting it opened at.
    private struct Opener {
        /// Its index in ``lines``.
        var index: Int
        /// The nesting before it.
        var depth: Int
        /// The closing byte it needs: `}` or `]`.
        var closer: UInt8
    }

    /// The bytes gathered so far, lines joined by `\n`.
    private var pending: [UInt8] = []
    /// Each gathered line: its range in ``pending`` and its number in the input.
    private var lines: [(range: Range<Int>, number: Int)] = []
    /// Openers whose matching closer has not come yet, outermost first.
    private var openers: [Opener] = []
    /// Complete nested documents (first and last line index), disjoint and in order.
    private var documents: [ClosedRange<Int>] = []
    /// The nesting after the last gathered line.
    private var depth = 0

    /// Whether a multi-line payload is being gathered.
    var isGathering: Bool { !lines.isEmpty }

    /// Feeds one line (without its terminator).
    mutating func feed(_ line: ArraySlice<UInt8>, number: Int) -> Step {
        let shape = Self.shape(of: line)
        if lines.isEmpty {
            // The common case: a line that is a whole payload on its own.
            guard case .opener(let closer) = shape else { return .payload(line, line: number) }
            depth = 0
            openers = []
            documents = []
            add(line, number: number)
            open(closer)
            return .gathering
        }
        pending.append(UInt8(ascii: "\n"))
        add(line, number: number)
        switch shape {
        case .opener(let closer):
            open(closer)
        case .closer(let byte):
            depth -= 1
            if let last = openers.last, last.depth == depth {
                openers.removeLast()
                if last.closer == byte { closeDocument(from: last.index) }
                if openers.isEmpty { return finishGathering(whole: last.closer == byte && last.index == 0) }
            }
        case .other:
            depth += Self.nesting(of: line)
            // Openers at or above the nesting reached were closed by something other than
            // their lone closer: they were not documents.
            while let last = openers.last, depth <= last.depth { openers.removeLast() }
            if openers.isEmpty { return finishGathering(whole: false) }
        }
        if pending.count > Self.limit { return finishGathering(whole: false) }
        return .gathering
    }

    /// What is left at the end of the input: the lines of an unfinished document, one by one.
    mutating func finish() -> [Framed] {
        guard !lines.isEmpty else { return [] }
        guard case .payloads(let framed) = finishGathering(whole: false) else { return [] }
        return framed
    }

    private mutating func add(_ line: ArraySlice<UInt8>, number: Int) {
        let start = pending.count
        pending.append(contentsOf: line)
        lines.append((start..<pending.count, number))
    }

    private mutating func open(_ closer: UInt8) {
        openers.append(Opener(index: lines.count - 1, depth: depth, closer: closer))
        depth += 1
    }

    /// Records the document from line `index` to the last line, replacing those inside it.
    private mutating func closeDocument(from index: Int) {
        while let last = documents.last, last.lowerBound > index { documents.removeLast() }
        documents.append(index...(lines.count - 1))
    }

    /// Ends the gathering: one payload when `whole` and it parses, else its lines one by one
    /// (complete nested documents that parse kept whole).
    private mutating func finishGathering(whole: Bool) -> Step {
        defer {
            pending = []
            lines = []
            openers = []
            documents = []
            depth = 0
        }
        if whole, Ingest.isWellFormedJSON(pending) { return .payload(pending[...], line: lines[0].number) }
        var framed: [Framed] = []
        var index = 0
        var nested = documents[...]
        while index < lines.count {
            if let document = nested.first, document.lowerBound == index {
                nested = nested.dropFirst()
                let bytes = pending[lines[document.lowerBound].range.lowerBound..<lines[document.upperBound].range.upperBound]
                if Ingest.isWellFormedJSON(bytes) {
                    framed.append((bytes, lines[index].number))
                    index = document.upperBound + 1
                    continue
                }
            }
            framed.append((pending[lines[index].range], lines[index].number))
            index += 1
        }
        return .payloads(framed)
    }

    /// What a line is, for framing.
    private enum Shape {
        /// Just `{` or `[` (the payload is the closing byte it needs).
        case opener(UInt8)
        /// Just `}` or `]`.
        case closer(UInt8)
        /// Anything else.
        case other
    }

    /// The shape of `line`, ignoring blanks and a leading UTF-8 byte-order mark, without
    /// copying it: its only other byte must be a bracket.
    private static func shape(of line: ArraySlice<UInt8>) -> Shape {
        var rest = line
        if rest.starts(with: Ingest.byteOrderMark) { rest = rest.dropFirst(Ingest.byteOrderMark.count) }
        var content = rest.lazy.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }.makeIterator()
        guard let first = content.next(), content.next() == nil else { return .other }
        switch first {
        case UInt8(ascii: "{"): return .opener(UInt8(ascii: "}"))
        case UInt8(ascii: "["): return .opener(UInt8(ascii: "]"))
        case UInt8(ascii: "}"), UInt8(ascii: "]"): return .closer(first)
        default: return .other
        }
    }

    /// How much `line` changes the nesting: brackets opened minus closed, outside strings.
    private static func nesting(of line: ArraySlice<UInt8>) -> Int {
        var change = 0
        var inString = false
        var escaped = false
        for byte in line {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): change += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): change -= 1
            default: break
            }
        }
        return change
    }
}
