/// Finds a string among the JSON string literals of some bytes, with their escapes decoded, so
/// that a purge finds `"zulip:\u00e9"` when asked for `zulip:é`.
///
/// It works string by string on any bytes, valid JSON or not (a quarantined payload is often
/// not): each `"` opens a literal that the next unescaped `"` closes.
enum JSONStrings {
    /// Whether `bytes` hold a string literal whose decoded UTF-8 is exactly `name`.
    static func contains(_ bytes: [UInt8], _ name: [UInt8]) -> Bool {
        var i = 0
        var decoded: [UInt8] = []
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "\"") else {
                i += 1
                continue
            }
            decoded.removeAll(keepingCapacity: true)
            i = decode(bytes, from: i + 1, into: &decoded)
            if decoded == name { return true }
        }
        return false
    }

    /// Decodes the literal whose contents start at `start` into `out`; returns the index
    /// after its closing quote (or the end of the bytes).
    private static func decode(_ bytes: [UInt8], from start: Int, into out: inout [UInt8]) -> Int {
        var i = start
        while i < bytes.count {
            let byte = bytes[i]
            i += 1
            if byte == UInt8(ascii: "\"") { return i }
            guard byte == UInt8(ascii: "\\"), i < bytes.count else {
                out.append(byte)
                continue
            }
            let escape = bytes[i]
            i += 1
            switch escape {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var unit = hex4(bytes, at: i) else { continue }
                i += 4
                // A high surrogate followed by `\u` and a low one is one scalar.
                if (0xD800..<0xDC00).contains(unit), i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"),
                    bytes[i + 1] == UInt8(ascii: "u"), let low = hex4(bytes, at: i + 2), (0xDC00..<0xE000).contains(low)
                {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: String(Unicode.Scalar(unit) ?? "\u{FFFD}").utf8)
            default: out.append(escape)  // `"`, `\\`, `/` and anything unknown stand for themselves
            }
        }
        return i
    }

    /// The value of four hex digits at `index`, or `nil`.
    private static func hex4(_ bytes: [UInt8], at index: Int) -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<(index + 4)] {
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
