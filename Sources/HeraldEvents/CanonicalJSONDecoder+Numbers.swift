extension CanonicalJSONDecoder {
    /// The shape of a number token, as found by ``scanNumber()``.
    struct NumberToken {
        /// Where the token starts (at `-` or the first digit).
        var start: Int
        /// Where its integer digits start and end.
        var digits: Range<Int>
        /// Whether it has a fraction or an exponent.
        var isInteger: Bool
        var isNegative: Bool
    }

    /// Reads an integer field's value: an `Int64` written without fraction or exponent,
    /// `null`, or an error naming `field` (computed only when needed). `depth` is the nesting
    /// of the container holding the value.
    mutating func readInteger(field: @autoclosure () -> String, depth: Int = 1) throws(Malformed) -> FieldValue<Int64> {
        switch current ?? 0 {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            break
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            _ = try skipValue(depth: depth)
            return .invalid(EventError(field: field(), reason: "expected an integer"))
        }
        let token = try scanNumber()
        guard token.isInteger else {
            return .invalid(EventError(field: field(), reason: "expected an integer, got \(text(of: token))"))
        }
        // Accumulate the magnitude, which may be 2^63 for Int64.min.
        var magnitude: UInt64 = 0
        for offset in token.digits {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[offset] - UInt8(ascii: "0")))
            if overflow1 || overflow2 {
                return .invalid(EventError(field: field(), reason: "integer out of range, got \(text(of: token))"))
            }
            magnitude = sum
        }
        if token.isNegative {
            guard magnitude <= UInt64(Int64.max) + 1 else {
                return .invalid(EventError(field: field(), reason: "integer out of range, got \(text(of: token))"))
            }
            return .value(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
        }
        guard magnitude <= UInt64(Int64.max) else {
            return .invalid(EventError(field: field(), reason: "integer out of range, got \(text(of: token))"))
        }
        return .value(Int64(magnitude))
    }

    /// Passes over a number following the JSON grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, the cursor on its first byte.
    mutating func scanNumber() throws(Malformed) -> NumberToken {
        let start = index
        let isNegative = current == UInt8(ascii: "-")
        if isNegative { index += 1 }
        let digitsStart = index
        guard let first = current, isDigit(first) else { throw fail("invalid number") }
        index += 1
        if first != UInt8(ascii: "0") {
            while let byte = current, isDigit(byte) { index += 1 }
        }
        let digits = digitsStart..<index
        var isInteger = true
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = current, isDigit(byte) else { throw fail("invalid number") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw fail("invalid number") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        return NumberToken(start: start, digits: digits, isInteger: isInteger, isNegative: isNegative)
    }

    /// The token's text for an error message, shortened past 40 bytes.
    private func text(of token: NumberToken) -> String {
        let end = min(index, token.start + 40)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[token.start..<end]), as: UTF8.self)
        return end < index ? text + "…" : text
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
