/// A parsed JSON document, for comparing JSON as values rather than text.
///
/// A tiny strict parser of its own, so that numbers and booleans never mix (Foundation's
/// `NSNumber` conflates them on some platforms).
enum JSONValue: Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Int64)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    struct ParseError: Error, CustomStringConvertible {
        var offset: Int
        var description: String { "invalid JSON at byte \(offset)" }
    }

    /// Parses `text`; the whole text must be one value.
    static func parse(_ text: String) throws -> JSONValue {
        var parser = Parser(bytes: Array(text.utf8))
        let value = try parser.value()
        parser.skipSpace()
        guard parser.offset == parser.bytes.count else { throw ParseError(offset: parser.offset) }
        return value
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .number(let n): "\(n)"
        case .string(let s): "\"\(s)\""
        case .array(let a): "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o): "{" + o.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var offset = 0

        mutating func skipSpace() {
            while offset < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[offset]) { offset += 1 }
        }

        mutating func expect(_ literal: String) throws {
            for byte in literal.utf8 {
                guard offset < bytes.count, bytes[offset] == byte else { throw ParseError(offset: offset) }
                offset += 1
            }
        }

        mutating func value() throws -> JSONValue {
            skipSpace()
            guard offset < bytes.count else { throw ParseError(offset: offset) }
            switch bytes[offset] {
            case UInt8(ascii: "n"): try expect("null"); return .null
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                offset += 1
                var items: [JSONValue] = []
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
                while true {
                    items.append(try value())
                    skipSpace()
                    guard offset < bytes.count else { throw ParseError(offset: offset) }
                    if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                    try expect("]")
                    return .array(items)
                }
            case UInt8(ascii: "{"):
                offset += 1
                var members: [String: JSONValue] = [:]
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(":")
                    guard members.updateValue(try value(), forKey: key) == nil else { throw ParseError(offset: offset) }
                    skipSpace()
                    guard offset < bytes.count else { throw ParseError(offset: offset) }
                    if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                    try expect("}")
                    return .object(members)
                }
            default:
                let start = offset
                if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
                while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { offset += 1 }
                guard let n = Int64(String(decoding: bytes[start..<offset], as: UTF8.self)) else {
                    throw ParseError(offset: start)
                }
                return .number(n)
            }
        }

        mutating func string() throws -> String {
            try expect("\"")
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while true {
                guard offset < bytes.count else { throw ParseError(offset: offset) }
                let byte = bytes[offset]
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    guard offset < bytes.count else { throw ParseError(offset: offset) }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "n"): raw.append(0x0A)
                    case UInt8(ascii: "r"): raw.append(0x0D)
                    case UInt8(ascii: "t"): raw.append(0x09)
                    case UInt8(ascii: "b"): raw.append(0x08)
                    case UInt8(ascii: "f"): raw.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard offset + 4 <= bytes.count,
                            let code = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
                        else { throw ParseError(offset: offset) }
                        offset += 4
                        flush()
                        // Surrogate pairs do not occur in Herald's output; map lone ones to U+FFFD.
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default: raw.append(escape)
                    }
                default:
                    raw.append(byte)
                }
            }
        }
    }
}
