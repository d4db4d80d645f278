/// Base64url (RFC 4648 §5) decoding, tolerant of what people paste.
///
/// Accepts both alphabets (`-_` and `+/`), with or without `=` padding, and nothing else
/// (no whitespace inside). Returns `nil` for malformed text instead of trapping.
enum Base64URL {
    /// The value of each ASCII byte in either alphabet, or 0xFF.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Whether `byte` belongs to either base64 alphabet (padding excluded).
    static func isAlphabet(_ byte: UInt8) -> Bool { table[Int(byte)] != 0xFF }

    /// Decodes `text`; `nil` when it is not base64 / base64url.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var bytes = Array(text)
        var padding = 0
        while bytes.last == UInt8(ascii: "=") {
            bytes.removeLast()
            padding += 1
        }
        guard padding <= 2, bytes.count % 4 != 1 else { return nil }
        if padding > 0, (bytes.count + padding) % 4 != 0 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            let value = table[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }

    /// Decodes a string; `nil` when it is not base64 / base64url.
    static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }

    /// Encodes `bytes` as base64url without padding.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = (accumulator << 8 | UInt32(byte)) & 0xFFFF
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((accumulator >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }
}
