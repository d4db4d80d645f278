/// Decoding of JSON strings and literals (RFC 8259 §7), shared by Herald's two JSON readers:
/// the strict canonical-event decoder and the tolerant ``JSONParser``.
package enum JSONEscape {
    /// Decodes the rest of a string, from `index` (inside it) to its closing quote, into
    /// `text`, leaving `index` on the quote. Returns `nil`, or why the string is invalid
    /// (`index` then on the fault): a raw control character, a bad escape, no closing quote.
    package static func decodeString(_ bytes: UnsafeRawBufferPointer, at index: inout Int, into text: inout [UInt8]) -> String? {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                return nil
            case UInt8(ascii: "\\"):
                if let reason = decode(bytes, at: &index, into: &text) { return reason }
            case 0..<0x20:
                return "control character in string"
            default:
                text.append(byte)
                index += 1
            }
        }
        return "unterminated string"
    }

    /// Whether `bytes` hold `literal` (`true`, `false`, `null`) at `index`.
    package static func hasLiteral(_ literal: StaticString, in bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
        return true
    }

    /// Decodes the escape whose backslash is at `index`, appends its UTF-8 to `text` and
    /// moves `index` past it. Returns `nil`, or why the escape is invalid (`index` then still
    /// on the backslash). A `\uD8xx` high surrogate must be followed by its `\uDCxx` low half.
    package static func decode(_ bytes: UnsafeRawBufferPointer, at index: inout Int, into text: inout [UInt8]) -> String? {
        let start = index
        guard start + 1 < bytes.count else { return "unterminated string" }
        let escape = bytes[start + 1]
        var next = start + 2
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            guard var value = hex4(bytes, at: next) else { return "invalid \\u escape" }
            next += 4
            if (0xD800..<0xDC00).contains(value) {
                guard next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u"),
                    let low = hex4(bytes, at: next + 2), (0xDC00..<0xE000).contains(low)
                else { return "lone surrogate in \\u escape" }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                next += 6
            }
            guard let scalar = Unicode.Scalar(value) else { return "lone surrogate in \\u escape" }
            text.append(contentsOf: UTF8.encode(scalar)!)
        default:
            return "invalid escape"
        }
        index = next
        return nil
    }

    /// The value of the four hex digits at `offset`, or `nil`.
    private static func hex4(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[offset..<(offset + 4)] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
