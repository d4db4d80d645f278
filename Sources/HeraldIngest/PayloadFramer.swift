import HeraldEvents

/// Splits input lines into payloads: one payload per line (JSONL, base64 bodies), except for
/// pretty-printed JSON documents, so `herald ingest payload.json` works on such files too. A
/// pure value over bytes: feed it each line, take what it returns. ``IngestSession`` and the
/// server's `POST /v1/ingest` frame their input with it.
///
/// ```swift
/// var framer = PayloadFramer()
/// for (number, line) in lines.enumerated() {
///     switch framer.feed(line, number: number + 1) {
///     case .payload(let payload, let line): handle(payload, line)
///     case .payloads(let framed): for (payload, line) in framed { handle(payload, line) }
///     case .gathering: break
///     }
/// }
/// for (payload, line) in framer.finish() { handle(payload, line) }
/// ```
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
///   stray `{` costs its own line and never swallows the good lines after it;
/// - directly inside an object, a line must begin a member (`"name": ...`), close the object,
///   or be the value of a member whose line ended with `:`. Any other line (a one-line
///   payload, say) shows that the gathering is not a pretty-printed document: its lines fall
///   back at once, and that line is framed afresh, so lines after a stray `{` are not held
///   back either (for `herald ingest -` reading a live stream, that matters as much).
package struct PayloadFramer: Sendable {
    /// The largest payload gathered over several lines before giving up on it.
    package static let limit = Ingest.maxPayloadBytes

    /// A payload and the line it starts on.
    package typealias Framed = (payload: ArraySlice<UInt8>, line: Int)

    package enum Step {
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
    /// The brackets open after the last gathered line, innermost last (`{` or `[`, outside
    /// strings): their count is the nesting.
    private var open: [UInt8] = []
    /// Whether the last gathered line ended with `:`, so that this one is a member's value.
    private var awaitsValue = false

    /// The nesting after the last gathered line.
    private var depth: Int { open.count }

    /// Whether a multi-line payload is being gathered.
    package var isGathering: Bool { !lines.isEmpty }

    /// A framer with nothing gathered.
    package init() {}

    /// Feeds one line (without its terminator).
    package mutating func feed(_ line: ArraySlice<UInt8>, number: Int) -> Step {
        let shape = Self.shape(of: line)
        if lines.isEmpty {
            // The common case: a line that is a whole payload on its own.
            guard case .opener(let closer) = shape else { return .payload(line, line: number) }
            openers = []
            documents = []
            add(line, number: number)
            openDocument(closer)
            return .gathering
        }
        if open.last == UInt8(ascii: "{"), !awaitsValue, !Self.mayComeInsideObject(line) {
            return fallBack(thenFeed: line, number: number)
        }
        pending.append(UInt8(ascii: "\n"))
        add(line, number: number)
        awaitsValue = Self.endsWithColon(line)
        switch shape {
        case .opener(let closer):
            openDocument(closer)
        case .closer(let byte):
            _ = open.popLast()
            if let last = openers.last, last.depth == depth {
                openers.removeLast()
                if last.closer == byte { closeDocument(from: last.index) }
                if openers.isEmpty { return finishGathering(whole: last.closer == byte && last.index == 0) }
            }
        case .other:
            Self.track(line, in: &open)
            // Openers at or above the nesting reached were closed by something other than
            // their lone closer: they were not documents.
            while let last = openers.last, depth <= last.depth { openers.removeLast() }
            if openers.isEmpty { return finishGathering(whole: false) }
        }
        if pending.count > Self.limit { return finishGathering(whole: false) }
        return .gathering
    }

    /// What is left at the end of the input: the lines of an unfinished document, one by one.
    package mutating func finish() -> [Framed] {
        guard !lines.isEmpty else { return [] }
        guard case .payloads(let framed) = finishGathering(whole: false) else { return [] }
        return framed
    }

    private mutating func add(_ line: ArraySlice<UInt8>, number: Int) {
        let start = pending.count
        pending.append(contentsOf: line)
        lines.append((start..<pending.count, number))
    }

    private mutating func openDocument(_ closer: UInt8) {
        openers.append(Opener(index: lines.count - 1, depth: depth, closer: closer))
        open.append(closer == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "["))
    }

    /// Ends a gathering that `line` shows is no document: its lines one by one, then what
    /// `line` itself is, framed afresh (it may open a gathering of its own).
    private mutating func fallBack(thenFeed line: ArraySlice<UInt8>, number: Int) -> Step {
        guard case .payloads(var framed) = finishGathering(whole: false) else { preconditionFailure("a partial gathering is never one payload") }
        switch feed(line, number: number) {
        case .payload(let payload, let line): framed.append((payload, line))
        case .payloads(let more): framed += more
        case .gathering: break
        }
        return .payloads(framed)
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
            open = []
            awaitsValue = false
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
        if rest.starts(with: JSONParser.byteOrderMark) { rest = rest.dropFirst(JSONParser.byteOrderMark.count) }
        var content = rest.lazy.filter { !isBlank($0) }.makeIterator()
        guard let first = content.next(), content.next() == nil else { return .other }
        switch first {
        case UInt8(ascii: "{"): return .opener(UInt8(ascii: "}"))
        case UInt8(ascii: "["): return .opener(UInt8(ascii: "]"))
        case UInt8(ascii: "}"), UInt8(ascii: "]"): return .closer(first)
        default: return .other
        }
    }

    /// Whether `line` may come directly inside an object, not after a `:`: it is blank,
    /// begins a member (with its name, a string) or closes a bracket. A line beginning with
    /// `{`, `[` or a bare value cannot.
    private static func mayComeInsideObject(_ line: ArraySlice<UInt8>) -> Bool {
        switch line.first(where: { !isBlank($0) }) {
        case nil, UInt8(ascii: "\""), UInt8(ascii: "}"), UInt8(ascii: "]"): true
        default: false
        }
    }

    /// Whether `line`, before trailing blanks, ends with `:`, so that a member's value
    /// follows on the next line (JSON strings do not span lines, so a name's closing quote
    /// comes before it).
    private static func endsWithColon(_ line: ArraySlice<UInt8>) -> Bool {
        line.last(where: { !isBlank($0) }) == UInt8(ascii: ":")
    }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// Applies `line`'s brackets to `open`: each `{` or `[` outside strings pushed, each
    /// closer popping one (a closer with nothing open is dropped: the nesting cannot fall
    /// below zero, and the gathering ends there anyway).
    private static func track(_ line: ArraySlice<UInt8>, in open: inout [UInt8]) {
        var inString = false
        var escaped = false
        for byte in line {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): open.append(byte)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = open.popLast()
            default: break
            }
        }
    }
}
