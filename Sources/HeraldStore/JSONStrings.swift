import HeraldEvents

/// Finds a string among the JSON string literals of some bytes, with their escapes decoded, so
/// that a purge finds `"zulip:\u00e9"` when asked for `zulip:é`.
///
/// It works string by string on any bytes, valid JSON or not (a quarantined payload is often
/// not): each `"` opens a literal that the next unescaped `"` closes, and an invalid escape
/// stands for itself.
enum JSONStrings {
    /// Whether `bytes` hold a string literal whose decoded UTF-8 is exactly `name`.
    static func contains(_ bytes: [UInt8], _ name: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { bytes in
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
    }

    /// Decodes the literal whose contents start at `start` into `out`; returns the index
    /// after its closing quote (or the end of the bytes).
    private static func decode(_ bytes: UnsafeRawBufferPointer, from start: Int, into out: inout [UInt8]) -> Int {
        var i = start
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") { return i + 1 }
            if byte == UInt8(ascii: "\\"), JSONEscape.decode(bytes, at: &i, into: &out) == nil { continue }
            out.append(byte)
            i += 1
        }
        return i
    }
}
