import HeraldEvents
import HeraldTestSupport
import Testing

@Suite("Canonical JSON decoder")
struct CanonicalJSONDecoderTests {
    /// A notify line whose `title` is the JSON text `title`.
    static func notify(title: String) -> String {
        #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":2,"title":"# + title + "}"
    }

    /// A notify line whose `id` is the JSON text `id`.
    static func notify(id: String) -> String {
        #"{"type":"notify","account":"a","chat":"c","kind":"message","id":"# + id + #","date":2}"#
    }

    /// The title decoded from `notify(title:)`.
    static func title(_ json: String) throws -> String? {
        guard case .notify(let n) = try Event(json: notify(title: json)).payload else { return nil }
        return n.title
    }

    /// The error for `line`, if it is rejected.
    static func error(_ line: String) -> EventError? {
        do {
            _ = try Event(json: line)
            return nil
        } catch {
            return error
        }
    }

    @Test("escapes and unicode decode to the same string")
    func escapes() throws {
        #expect(try Self.title(#""caf\u00e9""#) == "café")
        #expect(try Self.title(#""caf\u00E9""#) == "café")
        #expect(try Self.title(#""café""#) == "café")
        #expect(try Self.title(#""\ud83d\ude80 go""#) == "🚀 go")
        #expect(try Self.title(#""🚀 go""#) == "🚀 go")
        #expect(try Self.title(#""\"\\\/\b\f\n\r\t""#) == "\"\\/\u{8}\u{C}\n\r\t")
        #expect(try Self.title(#""\u0000x""#) == "\u{0}x")
        #expect(try Self.title(#""𝄞\n新""#) == "𝄞\n新")
        #expect(try Self.title(#""""#) == "")
        // An escaped key means the same key.
        let escapedKey = #"{"t\u0079pe":"revoke","account":"a"}"#
        #expect(try Event(json: escapedKey) == Event(account: "a", .revoke))
    }

    @Test(
        "bad strings are rejected as malformed documents",
        arguments: [
            #""\ud83d""#, #""\ud83d x""#, #""\ude80""#, #""\ud83d\u0041""#, #""\u12""#, #""\x""#, #""abc"#,
            "\"a\u{01}b\"", "\"tab\there\"", "\"new\nline\"",
        ])
    func badStrings(json: String) {
        let error = Self.error(Self.notify(title: json))
        #expect(error?.field == "", "\(String(describing: error))")
        #expect(error?.reason.hasPrefix("invalid JSON at byte ") == true, "\(String(describing: error))")
    }

    @Test("invalid UTF-8 is rejected wherever it is")
    func invalidUTF8() {
        let prefix = Array(#"{"type":"note","account":"a","reason":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        let bad: [[UInt8]] = [
            [0xFF], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82],
        ]
        for bytes in bad {
            let error = Self.error(prefix, bytes, suffix)
            #expect(error?.field == "" && error?.reason.contains("invalid UTF-8") == true, "\(bytes): \(String(describing: error))")
            // In an unknown key's value, and in an escaped string, too.
            let unknown = Array(#"{"type":"revoke","account":"a","x":["#.utf8) + [0x22] + bytes + Array(#""]}"#.utf8)
            #expect(Self.error(unknown, [], [])?.field == "")
            let escaped = prefix + Array(#"\n"#.utf8) + bytes + suffix
            #expect(Self.error(escaped, [], [])?.reason.contains("invalid UTF-8") == true)
        }
        #expect(Self.error(prefix, [0xF0, 0x9F, 0x9A, 0x80], suffix) == nil)
    }

    static func error(_ a: [UInt8], _ b: [UInt8], _ c: [UInt8]) -> EventError? {
        do {
            _ = try Event(json: a + b + c)
            return nil
        } catch {
            return error
        }
    }

    @Test("integer edges")
    func integers() throws {
        func id(_ text: String) throws -> Int64? {
            guard case .notify(let n) = try Event(json: Self.notify(id: text)).payload else { return nil }
            return n.id
        }
        #expect(try id("9223372036854775807") == .max)
        #expect(try id("1") == 1)
        #expect(
            Self.error(Self.notify(id: "9223372036854775808"))
                == EventError(field: "id", reason: "integer out of range, got 9223372036854775808"))
        #expect(Self.error(Self.notify(id: "99999999999999999999999")).map(\.field) == "id")
        #expect(Self.error(Self.notify(id: "-0")) == EventError(field: "id", reason: "must be > 0, got 0"))
        #expect(
            Self.error(Self.notify(id: "-9223372036854775808")) == EventError(field: "id", reason: "must be > 0, got -9223372036854775808"))
        #expect(Self.error(Self.notify(id: "-9223372036854775809"))?.reason.hasPrefix("integer out of range") == true)
        #expect(Self.error(Self.notify(id: "1.0")) == EventError(field: "id", reason: "expected an integer, got 1.0"))
        #expect(Self.error(Self.notify(id: "1e2")) == EventError(field: "id", reason: "expected an integer, got 1e2"))
        #expect(Self.error(Self.notify(id: "1.5E-3"))?.field == "id")
        #expect(Self.error(Self.notify(id: "\"1\"")) == EventError(field: "id", reason: "expected an integer"))
        #expect(Self.error(Self.notify(id: "null")) == EventError(field: "id", reason: "expected an integer, got null"))
        #expect(Self.error(Self.notify(id: "true")) == EventError(field: "id", reason: "expected an integer"))
        // Not JSON numbers at all: the document is malformed.
        for text in ["01", "-", "+1", "1.", ".5", "1e", "0x10", "NaN", "Infinity", "--1", "1.e3"] {
            #expect(Self.error(Self.notify(id: text))?.field == "", "\(text)")
        }
        let delete = #"{"type":"delete","account":"a","ids":[1,9223372036854775807,2.5,"x"]}"#
        #expect(Self.error(delete) == EventError(field: "ids[2]", reason: "expected an integer, got 2.5"))
        #expect(
            Self.error(#"{"type":"delete","account":"a","ids":[1,null]}"#)
                == EventError(field: "ids[1]", reason: "expected an integer, got null"))
        #expect(
            Self.error(#"{"type":"delete","account":"a","ids":7}"#) == EventError(field: "ids", reason: "expected an array of integers"))
    }

    @Test("unknown keys are skipped whatever their values")
    func unknownKeys() throws {
        let line =
            #"{"seq":12,"x":{"a":[1,{"b":null},"s\u00e9",true,false,-1.5e-7]},"type":"read","y":[],"z":{},"account":"a","chat":"c","maxId":3,"w":"\ud83d\ude80"}"#
        #expect(try Event(json: line) == Event(account: "a", .read(chat: "c", maxId: 3)))
        // Fields other types do not read are not checked (as before).
        #expect(try Event(json: #"{"type":"revoke","account":"a","title":5,"id":"x"}"#) == Event(account: "a", .revoke))
    }

    @Test("deep nesting is rejected without a crash")
    func deepNesting() {
        for depth in [63, 64, 65, 100_000] {
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let line = #"{"type":"revoke","account":"a","x":"# + value + "}"
            let error = Self.error(line)
            // The event object is depth 1, so 63 nested arrays fit and 64 do not.
            if depth <= 63 {
                #expect(error == nil, "\(depth)")
            } else {
                #expect(error?.reason.contains("nesting deeper than 64") == true, "\(depth)")
            }
        }
        #expect(Self.error(String(repeating: "{\"a\":", count: 100_000))?.field == "")
        #expect(Self.error(String(repeating: "[", count: 100_000))?.field == "")
        #expect(Self.error(#"{"type":"delete","account":"a","ids":[1,"# + String(repeating: "[", count: 70) + "]}")?.field == "")
    }

    @Test("whitespace is allowed between every token")
    func whitespace() throws {
        let line = " \t\r\n{ \"type\" :\n\"delete\" ,\t\"account\"\r:\"a\" , \"ids\" : [ 1 ,\n2 ] , \"chat\" : null } \n\t"
        #expect(try Event(json: line) == Event(account: "a", .delete(ids: [1, 2], chat: nil)))
    }

    @Test("only whitespace may follow the object", arguments: ["x", "{}", ",", "]", "\u{0}", "null", #"{"type":"revoke"}"#])
    func trailingGarbage(garbage: String) {
        let error = Self.error(#"{"type":"revoke","account":"a"} "# + garbage)
        #expect(
            error?.field == "" && error?.reason.contains("unexpected data after the JSON value") == true, "\(String(describing: error))")
    }

    @Test("whole-document errors name the byte offset")
    func documentErrors() {
        #expect(Self.error("") == EventError(field: "", reason: "invalid JSON at byte 0: unexpected end of input"))
        #expect(
            Self.error(#"{"type":"revoke","account":"a""#)
                == EventError(field: "", reason: "invalid JSON at byte 30: unexpected end of input"))
        #expect(Self.error(#"{"type" "revoke"}"#) == EventError(field: "", reason: "invalid JSON at byte 8: expected ':'"))
        #expect(Self.error("[1,2]") == EventError(field: "", reason: "expected a JSON object, got an array"))
        #expect(Self.error("\"s\"") == EventError(field: "", reason: "expected a JSON object, got a string"))
        // A malformed document is reported before any field error, wherever the fault is.
        #expect(
            Self.error(#"{"type":"teleport","account":"a","id":"x",}"#)
                == EventError(field: "", reason: "invalid JSON at byte 42: trailing comma"))
        #expect(Self.error(#"{"type":"delete","account":"a","ids":[1,2,]}"#)?.reason.hasSuffix("trailing comma") == true)
    }

    @Test("null is absent for optional fields and an error for required ones")
    func nulls() throws {
        let line = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":2,"title":null,"silent":null}"#
        #expect(try Event(json: line) == Event(account: "a", .notify(.init(chat: "c", kind: .message, id: 1, date: 2))))
        #expect(Self.error(#"{"type":null,"account":"a"}"#) == EventError(field: "type", reason: "expected a string, got null"))
        #expect(
            Self.error(#"{"type":"read","account":"a","chat":"c","maxId":null}"#)
                == EventError(field: "maxId", reason: "expected an integer, got null"))
    }

    @Test("a known key given twice is rejected; unknown ones are ignored")
    func duplicates() throws {
        #expect(Self.error(#"{"type":"revoke","account":"a","account":"b"}"#) == EventError(field: "account", reason: "duplicate key"))
        #expect(Self.error(#"{"type":"revoke","account":"a","\u0061ccount":"a"}"#) == EventError(field: "account", reason: "duplicate key"))
        #expect(try Event(json: #"{"seq":1,"seq":2,"type":"revoke","account":"a"}"#) == Event(account: "a", .revoke))
    }

    @Test("every entry point decodes the same bytes alike")
    func entryPoints() throws {
        for event in Samples.everyType {
            let text = event.jsonString
            let bytes = Array(text.utf8)
            #expect(try Event(json: bytes) == event)
            #expect(try Event(json: bytes[...]) == event)
            #expect(try bytes.withUnsafeBytes { buffer throws in try Event(json: buffer) } == event)
        }
    }
}
