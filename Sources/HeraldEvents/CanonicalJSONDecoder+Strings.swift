extension CanonicalJSONDecoder {
    /// Reads an object key, the cursor on its opening quote: the known key it names, if any.
    ///
    /// Keys without escapes are matched in place; an escaped key (`"t\u0079pe"`) is decoded
    /// first, so it means the same as it would to any other JSON reader.
    mutating func readKey() throws(Malformed) -> EventKey? {
        let start = index + 1
        let (end, escaped, ascii) = try scanString()
        if !escaped {
            index = end + 1
            if !ascii { try validateUTF8(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), at: start) }
            return EventKey(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        }
        let decoded = try unescape(from: start)
        return decoded.withUnsafeBytes { EventKey($0) }
    }

    /// Reads a string value, the cursor on its opening quote.
    mutating func parseString() throws(Malformed) -> String {
        let start = index + 1
        let (end, escaped, ascii) = try scanString()
        if !escaped {
            let contents = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if !ascii { try validateUTF8(contents, at: start) }
            index = end + 1
            return String(decoding: contents, as: UTF8.self)
        }
        let decoded = try unescape(from: start)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Checks and passes over a string, the cursor on its opening quote.
    mutating func skipString() throws(Malformed) {
        let start = index + 1
        let (end, escaped, ascii) = try scanString()
        if !escaped {
            if !ascii { try validateUTF8(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), at: start) }
            index = end + 1
        } else {
            _ = try unescape(from: start)
        }
    }

    /// Finds where the string at the cursor stops: its closing quote if it has no escapes,
    /// else its first backslash; also whether every byte before that is ASCII.
    ///
    /// Rejects raw control characters and a missing closing quote; does not move the cursor.
    private func scanString() throws(Malformed) -> (end: Int, escaped: Bool, ascii: Bool) {
        var offset = index + 1
        var high: UInt8 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") { return (offset, false, high < 0x80) }
            if byte == UInt8(ascii: "\\") { return (offset, true, high < 0x80) }
            if byte < 0x20 { throw Malformed(offset: offset, reason: "control character in string") }
            high |= byte
            offset += 1
        }
        throw Malformed(offset: offset, reason: "unterminated string")
    }

    /// Decodes the escaped string whose contents start at `start`, leaving the cursor after
    /// its closing quote; the result is checked to be valid UTF-8.
    private mutating func unescape(from start: Int) throws(Malformed) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(32)
        index = start
        if let reason = JSONEscape.decodeString(bytes, at: &index, into: &text) { throw fail(reason) }
        index += 1
        if text.withUnsafeBytes({ Self.firstInvalidUTF8($0) }) != nil {
            // Offsets inside the decoded text do not map back; name the string.
            throw Malformed(offset: start, reason: "invalid UTF-8 in string")
        }
        return text
    }

    /// Checks that `text` is well-formed UTF-8; `offset` locates it in the document.
    private func validateUTF8(_ text: UnsafeRawBufferPointer, at offset: Int) throws(Malformed) {
        if let bad = Self.firstInvalidUTF8(text) {
            throw Malformed(offset: offset + bad, reason: "invalid UTF-8 in string")
        }
    }

    /// The offset of the first byte of `text` that is not well-formed UTF-8 (an overlong
    /// form, a surrogate, a scalar past U+10FFFF, a truncated or stray byte), or `nil`.
    static func firstInvalidUTF8(_ text: UnsafeRawBufferPointer) -> Int? {
        var i = 0
        let count = text.count
        while i < count {
            let lead = text[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the range of the second byte
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard count - i >= length, (low...high).contains(text[i + 1]) else { return i }
            for k in 2..<max(length, 2) where text[i + k] & 0xC0 != 0x80 {
                return i
            }
            i += length
        }
        return nil
    }
}
