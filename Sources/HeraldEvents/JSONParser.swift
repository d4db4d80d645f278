/// A small, tolerant JSON parser over bytes.
///
/// It accepts RFC 8259 JSON plus one extension: a comma right before `}` or `]` (Telegram's
/// documentation sample has one, and Foundation rejects it). It never traps on any input,
/// bounds nesting at ``maxDepth``, rejects invalid UTF-8 and lone surrogates, and runs in
/// linear time, so adversarial payloads cost no more than their length.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted. Real payloads nest 3–4 levels.
    package static let maxDepth = 64
    /// The UTF-8 byte-order mark some editors put at the start of a file; every reader of
    /// payloads skips it.
    package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Why a document is not JSON, and where.
    package struct Failure: Error, Hashable {
        /// The byte offset where parsing stopped.
        package var offset: Int
        /// What was expected or found.
        package var reason: String
    }

    private let bytes: [UInt8]
    private var index = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one JSON document (surrounding whitespace and a UTF-8 byte-order mark allowed).
    package static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        if bytes.starts(with: Self.byteOrderMark) { parser.index = Self.byteOrderMark.count }
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw Failure(offset: parser.index, reason: "unexpected data after the JSON value")
        }
        return value
    }

    /// The byte ranges of the elements of a JSON array (surrounding whitespace and a UTF-8
    /// byte-order mark allowed), each element without the whitespace around it; each
    /// element is checked as ``parse(_:)`` checks a document.
    package static func arrayElements(_ bytes: [UInt8]) throws(Failure) -> [Range<Int>] {
        var parser = JSONParser(bytes: bytes)
        if bytes.starts(with: Self.byteOrderMark) { parser.index = Self.byteOrderMark.count }
        parser.skipWhitespace()
        guard parser.current == UInt8(ascii: "[") else { throw parser.fail("expected a JSON array") }
        parser.index += 1
        var elements: [Range<Int>] = []
        parser.skipWhitespace()
        if parser.current == UInt8(ascii: "]") {
            parser.index += 1
        } else {
            while true {
                parser.skipWhitespace()
                let start = parser.index
                _ = try parser.parseValue(depth: 1)
                elements.append(start..<parser.index)
                if try parser.endOfMember(closing: UInt8(ascii: "]")) { break }
            }
        }
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw Failure(offset: parser.index, reason: "unexpected data after the JSON value")
        }
        return elements
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func fail(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard let byte = current else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        guard bytes.withUnsafeBytes({ JSONEscape.hasLiteral(literal, in: $0, at: index) }) else { throw fail("invalid literal") }
        index += literal.utf8CodeUnitCount
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            if try endOfMember(closing: UInt8(ascii: "}")) { return .object(members) }
        }
    }

    /// After a member of an object or array: passes a `,` (and returns false) or the
    /// `closing` bracket, also after a tolerated trailing comma (and returns true).
    private mutating func endOfMember(closing: UInt8) throws(Failure) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            guard current == closing else { return false }
            index += 1
            return true
        case closing:
            index += 1
            return true
        default:
            throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            if try endOfMember(closing: UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw fail("invalid number") }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, isDigit(byte) else { throw fail("invalid number") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw fail("invalid number") }
            skipDigits()
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw fail("control character in string") }
            index += 1
        }
        guard let stop = current else { throw fail("unterminated string") }
        var text = Array(bytes[start..<index])
        if stop == UInt8(ascii: "\\") {
            try parseEscapedTail(into: &text)
        }
        index += 1  // closing quote
        guard let string = String(validating: text, as: UTF8.self) else {
            throw Failure(offset: start, reason: "invalid UTF-8 in string")
        }
        return string
    }

    /// Continues a string from its first backslash to (not past) the closing quote.
    private mutating func parseEscapedTail(into text: inout [UInt8]) throws(Failure) {
        let reason = bytes.withUnsafeBytes { JSONEscape.decodeString($0, at: &index, into: &text) }
        if let reason { throw fail(reason) }
    }
}
