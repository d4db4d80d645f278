import HeraldEvents

/// A strings table an app ships for its localized push alerts (`herald ingest --strings`).
///
/// APNs alerts may carry a key and arguments instead of text (`loc-key` / `loc-args`,
/// `title-loc-key` / `title-loc-args`, `subtitle-loc-key`; FCM `body_loc_key` /
/// `title_loc_key`): the device looks the key up in the app's `Localizable.strings` and
/// fills the format's `%@` / `%1$@` / `%d` with the arguments. Herald does the same with the
/// table the user supplies, read from either form an app ships:
/// - Apple `.strings` text (`"KEY" = "value";`, `/* */` and `//` comments, `\"`, `\\`, `\n`,
///   `\t`, `\r`, `\Uxxxx` escapes, a surrogate pair as two; UTF-8, or UTF-16 with a
///   byte-order mark);
/// - a JSON object of strings (`{"KEY": "value"}`).
///
/// Without a table, or for a key it lacks, ``render(key:args:)`` joins the arguments in
/// order with `": "` (`Major Tom: I'm floating…`), so the text the push carries is kept and
/// the bare key is never shown.
public struct LocalizedStrings: Sendable, Hashable {
    /// The formats by key.
    public var formats: [String: String]

    /// Creates a table from its formats.
    public init(_ formats: [String: String] = [:]) {
        self.formats = formats
    }

    /// Parses a strings table: a JSON object of strings, else Apple `.strings` text.
    ///
    /// - Throws: ``IngestError`` (field `strings`) naming the line at fault.
    public init(parsing bytes: [UInt8]) throws(IngestError) {
        let text = Self.decodeText(bytes)
        if text.first(where: { !$0.isWhitespace }) == "{", let value = try? JSONParser.parse(Array(text.utf8)),
            let members = value.object
        {
            var formats: [String: String] = [:]
            for (key, value) in members {
                guard let format = value.string else {
                    throw IngestError(format: nil, field: "strings", reason: "key \"\(key)\": expected a string, got \(value.typeName)")
                }
                formats[key] = format
            }
            self.init(formats)
            return
        }
        var parser = StringsFileParser(Array(text.unicodeScalars))
        self.init(try parser.parse())
    }

    /// The text of `key` with `args`: its format filled in when the table has it, else the
    /// arguments joined with `": "`; `nil` when there is no key or nothing to show.
    public func render(key: String?, args: [String]) -> String? {
        guard let key, !key.isEmpty else { return args.isEmpty ? nil : args.joined(separator: ": ") }
        if let format = formats[key] { return Self.fill(format, args: args) }
        if !args.isEmpty { return args.joined(separator: ": ") }
        return Self.readable(key)
    }

    /// A key without arguments or format, made readable: `NEW_MESSAGE` → `new message`.
    static func readable(_ key: String) -> String {
        key.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == "." }).joined(separator: " ").lowercased()
    }

    /// `format` with its `%@`, `%d`, `%1$@`, … replaced by `args` (in order, or by position)
    /// and `%%` by `%`. A specifier with no argument left becomes empty.
    static func fill(_ format: String, args: [String]) -> String {
        var output = ""
        var next = 0
        var scalars = Array(format.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            guard scalar == "%" else {
                output.unicodeScalars.append(scalar)
                continue
            }
            if scalars.first == "%" {
                scalars.removeFirst()
                output += "%"
                continue
            }
            // [position$] [flags/width/precision] [length] conversion
            var spec = scalars
            var digits = ""
            while let c = spec.first, ("0"..."9").contains(c) { digits.unicodeScalars.append(c); spec.removeFirst() }
            var position: Int?
            if spec.first == "$", let number = Int(digits) {
                position = number
                spec.removeFirst()
            } else {
                spec = scalars
            }
            while let c = spec.first, "-+ #0123456789.*".unicodeScalars.contains(c) { spec.removeFirst() }
            while let c = spec.first, "hlqLzjt".unicodeScalars.contains(c) { spec.removeFirst() }
            guard let conversion = spec.first, "@dDiuUxXoOfFeEgGcCsSpaA".unicodeScalars.contains(conversion) else {
                output += "%"
                continue
            }
            spec.removeFirst()
            scalars = spec
            let index: Int
            if let position {
                index = position - 1
            } else {
                index = next
                next += 1
            }
            if args.indices.contains(index) { output += args[index] }
        }
        return output
    }

    /// The text of a strings file: UTF-16 when it starts with a byte-order mark, else UTF-8
    /// (a UTF-8 byte-order mark skipped).
    static func decodeText(_ bytes: [UInt8]) -> String {
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            let littleEndian = bytes[0] == 0xFF
            var units: [UInt16] = []
            var index = 2
            while index + 1 < bytes.count {
                let (low, high) = littleEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
                units.append(UInt16(high) << 8 | UInt16(low))
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
        let body = bytes.starts(with: JSONParser.byteOrderMark) ? bytes.dropFirst(3) : bytes[...]
        return String(decoding: body, as: UTF8.self)
    }
}

/// Reads Apple `.strings` text: `"key" = "value";` pairs, comments, escapes.
struct StringsFileParser {
    var scalars: ArraySlice<Unicode.Scalar>
    var line = 1

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars[...]
    }

    func error(_ reason: String, line: Int? = nil) -> IngestError {
        IngestError(format: nil, field: "strings", reason: "line \(line ?? self.line): \(reason)")
    }

    mutating func parse() throws(IngestError) -> [String: String] {
        var formats: [String: String] = [:]
        while true {
            try skipSpaceAndComments()
            guard !scalars.isEmpty else { return formats }
            let key = try token()
            try skipSpaceAndComments()
            if scalars.first == ";" {
                // `"key";` means key = key.
                scalars.removeFirst()
                formats[key] = key
                continue
            }
            guard scalars.popFirst() == "=" else { throw error("expected = after \"\(key)\"") }
            try skipSpaceAndComments()
            let value = try token()
            let valueLine = line
            try skipSpaceAndComments()
            guard scalars.popFirst() == ";" else { throw error("expected ; after the value of \"\(key)\"", line: valueLine) }
            formats[key] = value
        }
    }

    mutating func skipSpaceAndComments() throws(IngestError) {
        while let c = scalars.first {
            if c == "\n" {
                line += 1
                scalars.removeFirst()
            } else if c.properties.isWhitespace {
                scalars.removeFirst()
            } else if c == "/", scalars.dropFirst().first == "*" {
                scalars.removeFirst(2)
                while !scalars.starts(with: ["*", "/"]) {
                    guard let skipped = scalars.popFirst() else { throw error("unterminated /* comment") }
                    if skipped == "\n" { line += 1 }
                }
                scalars.removeFirst(2)
            } else if c == "/", scalars.dropFirst().first == "/" {
                while let skipped = scalars.first, skipped != "\n" { scalars.removeFirst() }
            } else {
                return
            }
        }
    }

    /// A quoted string, or an unquoted word of letters, digits and `_.-:$/`.
    mutating func token() throws(IngestError) -> String {
        guard let first = scalars.first else { throw error("unexpected end of file") }
        if first != "\"" {
            var word = ""
            while let c = scalars.first, c.properties.isAlphabetic || ("0"..."9").contains(c) || "_.-:$/".unicodeScalars.contains(c) {
                word.unicodeScalars.append(c)
                scalars.removeFirst()
            }
            guard !word.isEmpty else { throw error("expected a quoted string") }
            return word
        }
        scalars.removeFirst()
        var text = ""
        while let c = scalars.popFirst() {
            switch c {
            case "\"":
                return text
            case "\\":
                guard let escaped = scalars.popFirst() else { throw error("unterminated string") }
                switch escaped {
                case "n": text += "\n"
                case "t": text += "\t"
                case "r": text += "\r"
                case "U", "u":
                    var value = try hexUnit()
                    if (0xD800..<0xDC00).contains(value), scalars.starts(with: ["\\", "U"]) || scalars.starts(with: ["\\", "u"]) {
                        // A UTF-16 surrogate pair written as two escapes.
                        scalars.removeFirst(2)
                        let low = try hexUnit()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("\\U\(String(value, radix: 16)) is not followed by a low surrogate")
                        }
                        value = 0x10000 + (value - 0xD800) << 10 + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw error("\\U\(String(value, radix: 16)) is not a character") }
                    text.unicodeScalars.append(scalar)
                default: text.unicodeScalars.append(escaped)
                }
            case "\n":
                line += 1
                text += "\n"
            default:
                text.unicodeScalars.append(c)
            }
        }
        throw error("unterminated string")
    }

    /// The four hex digits after `\U`, as a UTF-16 code unit.
    mutating func hexUnit() throws(IngestError) -> UInt32 {
        let hex = String(String.UnicodeScalarView(scalars.prefix(4)))
        guard hex.count == 4, let value = UInt32(hex, radix: 16) else { throw error("\\U needs four hex digits") }
        scalars.removeFirst(4)
        return value
    }
}
