/// A JSON document as a value: what ``JSONParser`` (the tolerant reader) gives the payload
/// adapters and the server's request bodies, and what the server builds its small response
/// bodies from (``write(to:)``, through ``JSONWriter``, keys sorted).
///
/// Numbers keep their literal text so that 64-bit ids never pass through `Double`;
/// ``integer`` reads them exactly. Objects are dictionaries: a repeated key keeps its last value.
package enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, already checked against the JSON grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The members, when this is an object.
    package var object: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The elements, when this is an array.
    package var array: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The text, when this is a string.
    package var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// Whether this is `null`.
    package var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// The value as a 64-bit integer: a JSON integer or a string of decimal digits
    /// (Telegram and Zulip send numbers as strings). `nil` for anything else or on overflow.
    package var integer: Int64? {
        switch self {
        case .number(let text), .string(let text): Self.parseInteger(text)
        default: nil
        }
    }

    /// A short name of the value's type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Parses an optional `-` followed by 1…19 decimal digits into an `Int64`, without traps.
    package static func parseInteger(_ text: String) -> Int64? {
        var utf8 = Substring(text).utf8[...]
        var negative = false
        if utf8.first == UInt8(ascii: "-") {
            negative = true
            utf8 = utf8.dropFirst()
        }
        guard !utf8.isEmpty, utf8.count <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            magnitude = magnitude * 10 + UInt64(byte - UInt8(ascii: "0"))  // 19 digits fit in UInt64
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// The value when this is `true` or `false`.
    package var bool: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The value as an unsigned 64-bit integer: a JSON integer of at most 20 digits that fits.
    package var unsigned: UInt64? {
        if case .number(let text) = self { UInt64(text) } else { nil }
    }

    /// An integer, as a number.
    package static func int(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }

    /// Writes the value, object keys sorted, so that the same value is always the same bytes.
    package func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.bool(value)
        case .number(let text): writer.raw(text.utf8)
        case .string(let value): writer.string(value)
        case .array(let values):
            writer.arrayStart()
            for value in values { value.write(to: &writer) }
            writer.arrayEnd()
        case .object(let members):
            writer.objectStart()
            for key in members.keys.sorted() {
                writer.key(key)
                members[key].unsafelyUnwrapped.write(to: &writer)
            }
            writer.objectEnd()
        }
    }

    /// The value written compactly, keys sorted.
    package var bytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }
}
