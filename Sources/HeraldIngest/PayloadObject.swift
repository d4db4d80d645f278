import HeraldEvents

/// A JSON object of a payload together with its path, so every read can name its field.
///
/// Readers are lenient in the ways real payloads need (numbers as strings, ids as comma
/// lists, `null` meaning absent) and strict otherwise: a present value of the wrong type
/// throws an ``IngestError`` such as `custom.msg_id: expected an integer or a numeric string`.
struct PayloadObject {
    /// The members.
    let members: [String: JSONValue]
    /// Where the object sits in the payload (`""` for the root, `custom`, `notification`).
    let path: String
    /// The format being decoded, for errors.
    let format: PayloadFormat

    /// Wraps `members` found at `path`.
    init(_ members: [String: JSONValue], path: String = "", format: PayloadFormat) {
        self.members = members
        self.path = path
        self.format = format
    }

    /// Parses `bytes` as JSON and requires an object at the top.
    static func parse(_ bytes: [UInt8], format: PayloadFormat) throws(IngestError) -> PayloadObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw IngestError(format: format, field: "", reason: "invalid JSON at byte \(error.offset): \(error.reason)")
        }
        guard let members = value.object else {
            throw IngestError(format: format, field: "", reason: "expected a JSON object, got \(value.typeName)")
        }
        return PayloadObject(members, format: format)
    }

    /// The path of `key` inside this object (`custom.msg_id`).
    func field(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// An error about `key`.
    func error(_ key: String, _ reason: String) -> IngestError {
        IngestError(format: format, field: field(key), reason: reason)
    }

    /// The value of `key`, treating `null` as absent.
    subscript(key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    /// Whether `key` is present and not `null`.
    func has(_ key: String) -> Bool { self[key] != nil }

    /// A string member; numbers are rejected.
    func string(_ key: String) throws(IngestError) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.string else { throw error(key, "expected a string, got \(value.typeName)") }
        return text
    }

    /// A string member, or `nil` when it is absent or empty (payloads send `""` for "none").
    func nonEmptyString(_ key: String) throws(IngestError) -> String? {
        guard let text = try string(key), !text.isEmpty else { return nil }
        return text
    }

    /// A string member, or its number's text (legacy payloads mix the two).
    func text(_ key: String) throws(IngestError) -> String? {
        guard let value = self[key] else { return nil }
        switch value {
        case .string(let text), .number(let text): return text
        default: throw error(key, "expected a string or a number, got \(value.typeName)")
        }
    }

    /// A non-empty string member, or an error naming `key` when absent.
    func requiredString(_ key: String) throws(IngestError) -> String {
        guard let text = try string(key) else { throw error(key, "missing") }
        guard !text.isEmpty else { throw error(key, "must be a non-empty string") }
        return text
    }

    /// An integer member: a JSON integer or a numeric string.
    func integer(_ key: String) throws(IngestError) -> Int64? {
        guard let value = self[key] else { return nil }
        guard let number = value.integer else {
            throw error(key, "expected an integer or a numeric string")
        }
        return number
    }

    /// A positive id member (`> 0`), as an integer or a numeric string.
    func id(_ key: String) throws(IngestError) -> Int64? {
        guard let number = try integer(key) else { return nil }
        guard number > 0 else { throw error(key, "must be > 0, got \(number)") }
        return number
    }

    /// A positive id member that must be present.
    func requiredID(_ key: String) throws(IngestError) -> Int64 {
        guard let number = try id(key) else { throw error(key, "missing") }
        return number
    }

    /// A Unix time in seconds (`>= 0`), as an integer or a numeric string.
    func date(_ key: String) throws(IngestError) -> Int64? {
        guard let number = try integer(key) else { return nil }
        guard number >= 0 else { throw error(key, "must be >= 0 (Unix seconds), got \(number)") }
        return number
    }

    /// A list of positive ids: a JSON array of integers / numeric strings, or one string of
    /// comma-separated ids (`"123,234"`), or a single integer.
    func ids(_ key: String) throws(IngestError) -> [Int64]? {
        guard let value = self[key] else { return nil }
        var ids: [Int64] = []
        switch value {
        case .array(let elements):
            for (offset, element) in elements.enumerated() {
                guard let number = element.integer, number > 0 else {
                    throw IngestError(
                        format: format, field: "\(field(key))[\(offset)]",
                        reason: "expected a positive integer or numeric string")
                }
                ids.append(number)
            }
        case .string(let text):
            for (offset, part) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                let trimmed = part.trimmingSpaces
                guard let number = JSONValue.parseInteger(trimmed), number > 0 else {
                    throw error(key, "item \(offset) of the comma-separated list is not a positive integer")
                }
                ids.append(number)
            }
        case .number:
            guard let number = value.integer, number > 0 else { throw error(key, "expected a positive integer") }
            ids.append(number)
        default:
            throw error(key, "expected a list of ids, got \(value.typeName)")
        }
        guard !ids.isEmpty else { throw error(key, "must list at least one id") }
        return ids
    }

    /// A flag: `true`/`false`, `1`/`0`, or those as strings. Anything else is an error.
    func flag(_ key: String) throws(IngestError) -> Bool? {
        guard let value = self[key] else { return nil }
        switch value {
        case .bool(let flag): return flag
        case .number(let text), .string(let text):
            switch text {
            case "1", "true": return true
            case "0", "false", "": return false
            default: break
            }
        default: break
        }
        throw error(key, "expected a boolean, 0/1 or \"0\"/\"1\"")
    }

    /// A nested object; `asJSONText` also accepts a string holding a JSON object (Telegram
    /// on Android sends `custom` that way).
    func object(_ key: String, asJSONText: Bool = false) throws(IngestError) -> PayloadObject? {
        guard let value = self[key] else { return nil }
        if let members = value.object { return PayloadObject(members, path: field(key), format: format) }
        if asJSONText, let text = value.string,
            let inner = try? JSONParser.parse(Array(text.utf8)), let members = inner.object
        {
            return PayloadObject(members, path: field(key), format: format)
        }
        throw error(key, "expected an object, got \(value.typeName)")
    }

    /// The FCM data an app receives: `data`, or `message.data` of an FCM HTTP v1 send request
    /// (a `message` that is not an object, such as Telegram's announcement text, is not one).
    func fcmData() throws(IngestError) -> PayloadObject? {
        if let data = try object("data") { return data }
        guard self["message"]?.object != nil else { return nil }
        return try object("message")?.object("data")
    }

    /// An array of strings (other element types are an error naming the element).
    func strings(_ key: String) throws(IngestError) -> [String]? {
        guard let value = self[key] else { return nil }
        guard let elements = value.array else { throw error(key, "expected an array of strings, got \(value.typeName)") }
        var texts: [String] = []
        for (offset, element) in elements.enumerated() {
            switch element {
            case .string(let text), .number(let text): texts.append(text)
            default:
                throw IngestError(format: format, field: "\(field(key))[\(offset)]", reason: "expected a string, got \(element.typeName)")
            }
        }
        return texts
    }
}

extension Substring {
    /// The substring without leading and trailing spaces.
    var trimmingSpaces: String {
        var slice = self[...]
        while slice.first == " " { slice = slice.dropFirst() }
        while slice.last == " " { slice = slice.dropLast() }
        return String(slice)
    }
}

/// `value ?? fallback()` for a fallback that throws ``IngestError``: the standard `??` is
/// `rethrows`, which erases the typed error.
func orElse<T>(_ value: T?, _ fallback: @autoclosure () throws(IngestError) -> T?) throws(IngestError) -> T? {
    if let value { return value }
    return try fallback()
}
