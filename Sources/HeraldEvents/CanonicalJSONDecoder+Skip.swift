extension CanonicalJSONDecoder {
    /// Checks and passes over any JSON value, the cursor on its first byte; `depth` is the
    /// nesting of the container holding it. Returns the value's type for error messages.
    ///
    /// Containers deeper than ``maxDepth`` are rejected, so recursion stays bounded.
    mutating func skipValue(depth: Int) throws(Malformed) -> String {
        guard let byte = current else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            try skipObject(depth: depth + 1)
            return "an object"
        case UInt8(ascii: "["):
            try skipArray(depth: depth + 1)
            return "an array"
        case UInt8(ascii: "\""):
            try skipString()
            return "a string"
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return "a boolean"
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return "a boolean"
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
            return "a number"
        default:
            throw fail("unexpected character")
        }
    }

    /// Passes over an object, the cursor on its `{`.
    private mutating func skipObject(depth: Int) throws(Malformed) {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            try skipString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            _ = try skipValue(depth: depth)
            if try endOfMember(closing: UInt8(ascii: "}")) { return }
        }
    }

    /// Passes over an array, the cursor on its `[`.
    private mutating func skipArray(depth: Int) throws(Malformed) {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            _ = try skipValue(depth: depth)
            if try endOfMember(closing: UInt8(ascii: "]")) { return }
        }
    }
}
