/// A single-pass, strict decoder of one canonical JSON event, reading UTF-8 bytes directly.
///
/// It scans the top-level object's keys, matches each against the canonical field names by
/// comparing bytes, and parses its value as the type that field expects into ``EventFields``;
/// no intermediate tree is built and unknown keys' values are validated and skipped.
///
/// Strictness (RFC 8259 plus): nesting is bounded at ``maxDepth``; strings must be valid
/// UTF-8 without raw control characters, and `\u` escapes must not leave a lone surrogate;
/// numbers follow the JSON grammar (no leading zeros, `+`, `NaN`); trailing commas and a
/// byte order mark are rejected (Foundation's readers take both); only whitespace may follow
/// the object. Any of these is a whole-document error (`field == ""`,
/// `invalid JSON at byte N: …`), reported before any field error, as Foundation did.
///
/// Field errors are recorded, not thrown, while scanning, because which fields matter
/// depends on `type`, which may come last; ``EventFields/event()`` then reports the first
/// error in the order the fields are read (type, account, then the type's fields).
///
/// A known key given twice is rejected (`title: duplicate key`) rather than resolved by
/// "first wins" or "last wins", so no other reader can see a different event in the same
/// line. Repeated unknown keys are not tracked.
struct CanonicalJSONDecoder {
    /// The deepest nesting accepted; the event object itself is depth 1.
    static let maxDepth = 64

    /// A well-formedness failure: where, and what.
    struct Malformed: Error {
        var offset: Int
        var reason: String
    }

    /// The document.
    let bytes: UnsafeRawBufferPointer
    /// The offset of the next unread byte.
    var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Decodes the document into an event (not yet validated).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(EventError) -> Event {
        var decoder = CanonicalJSONDecoder(bytes)
        let fields: EventFields
        do {
            fields = try decoder.document()
        } catch let failure {
            throw EventError(field: "", reason: "invalid JSON at byte \(failure.offset): \(failure.reason)")
        }
        return try fields.event()
    }

    /// Reads the whole document: one value, then only whitespace.
    mutating func document() throws(Malformed) -> EventFields {
        skipWhitespace()
        guard let first = current else { throw fail("unexpected end of input") }
        var fields = EventFields()
        if first == UInt8(ascii: "{") {
            try readEventObject(into: &fields)
        } else {
            let kind = try skipValue(depth: 0)
            fields.topLevelError = EventError(field: "", reason: "expected a JSON object, got \(kind)")
        }
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return fields
    }

    /// Reads the event object, the cursor on its `{`.
    private mutating func readEventObject(into fields: inout EventFields) throws(Malformed) {
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try readKey()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            if let key {
                try readField(key, into: &fields)
            } else {
                _ = try skipValue(depth: 1)
            }
            if try endOfMember(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Reads the value of the known `key` as the type it expects.
    private mutating func readField(_ key: EventKey, into fields: inout EventFields) throws(Malformed) {
        if !fields.markSeen(key) {
            fields.duplicateKeyError = fields.duplicateKeyError ?? EventError(field: key.name, reason: "duplicate key")
        }
        switch key.valueType {
        case .string: fields.set(key, try readString(for: key))
        case .integer: fields.set(key, try readInteger(field: key.name))
        case .boolean: fields.set(key, try readBoolean(for: key))
        case .integers: fields.ids = try readIntegers(for: key)
        }
    }

    /// A string value, `null`, or a type mismatch.
    private mutating func readString(for key: EventKey) throws(Malformed) -> FieldValue<String> {
        switch current {
        case UInt8(ascii: "\""): return .value(try parseString())
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default:
            _ = try skipValue(depth: 1)
            return .invalid(EventError(field: key.name, reason: "expected a string"))
        }
    }

    /// A boolean value, `null`, or a type mismatch.
    private mutating func readBoolean(for key: EventKey) throws(Malformed) -> FieldValue<Bool> {
        switch current {
        case UInt8(ascii: "t"): try expectLiteral("true"); return .value(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .value(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default:
            _ = try skipValue(depth: 1)
            return .invalid(EventError(field: key.name, reason: "expected a boolean"))
        }
    }

    /// An array of integers; the first bad element is named `ids[i]`.
    private mutating func readIntegers(for key: EventKey) throws(Malformed) -> FieldValue<[Int64]> {
        switch current {
        case UInt8(ascii: "["): break
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default:
            _ = try skipValue(depth: 1)
            return .invalid(EventError(field: key.name, reason: "expected an array of integers"))
        }
        index += 1
        skipWhitespace()
        var values: [Int64] = []
        var firstError: EventError?
        if current == UInt8(ascii: "]") {
            index += 1
            return .value(values)
        }
        while true {
            switch try readInteger(field: "\(key.name)[\(values.count)]", depth: 2) {
            case .value(let value): values.append(value)
            case .null:
                firstError = firstError ?? EventError(field: "\(key.name)[\(values.count)]", reason: "expected an integer, got null")
            case .invalid(let error): firstError = firstError ?? error
            case .absent: preconditionFailure("an array element is never absent")
            }
            if firstError != nil { values.append(0) }  // keeps the element count for later indices
            if try endOfMember(closing: UInt8(ascii: "]")) {
                if let firstError { return .invalid(firstError) }
                return .value(values)
            }
        }
    }

    /// After a member of an object or array: passes a `,` (and returns false) or the
    /// `closing` bracket (and returns true); anything else, or a trailing comma, is malformed.
    mutating func endOfMember(closing: UInt8) throws(Malformed) -> Bool {
        skipWhitespace()
        switch current {
        case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") || current == UInt8(ascii: "]") { throw fail("trailing comma") }
            return false
        case closing:
            index += 1
            return true
        case nil:
            throw fail("unexpected end of input")
        default:
            throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
        }
    }

    // MARK: Bytes

    /// The byte at the cursor, or `nil` at the end.
    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// A failure at the cursor.
    func fail(_ reason: String) -> Malformed { Malformed(offset: index, reason: reason) }

    /// Moves past JSON whitespace (space, tab, line feed, carriage return).
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Consumes `literal` (`true`, `false`, `null`) at the cursor.
    mutating func expectLiteral(_ literal: StaticString) throws(Malformed) {
        guard JSONEscape.hasLiteral(literal, in: bytes, at: index) else { throw fail("invalid literal") }
        index += literal.utf8CodeUnitCount
    }
}
