import HeraldTestSupport
import HeraldEvents
import Testing

@testable import HeraldIngest

@Suite("JSON parser")
struct JSONParserTests {
    func parse(_ text: String) -> JSONValue? { try? JSONParser.parse(Array(text.utf8)) }

    @Test func values() throws {
        #expect(parse(#"{"a":[1,-2.5e3,"x",true,false,null]}"#) == .object(["a": .array([
            .number("1"), .number("-2.5e3"), .string("x"), .bool(true), .bool(false), .null,
        ])]))
        #expect(parse(#""\u00e9\ud83d\ude00\n\"\\\/""#) == .string("é😀\n\"\\/"))
        #expect(parse("\u{FEFF} {} ") == .object([:]))
    }

    @Test func trailingCommasAreTolerated() throws {
        #expect(parse(#"{"a":1,}"#) == .object(["a": .number("1")]))
        #expect(parse("[1, 2 ,\n]") == .array([.number("1"), .number("2")]))
        #expect(parse("[,]") == nil)
        #expect(parse("[1,,]") == nil)
        #expect(parse(#"{,}"#) == nil)
    }

    @Test(arguments: [
        "", " ", "{", "[", "]", "{\"a\"}", "{\"a\":}", "01", "1.", "-", "1e", "tru", "nul", "\"\\x\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"a", "{} {}", "\"\u{01}\"", "[1 2]", "{\"a\" 1}", "+1", ".5", "NaN",
    ])
    func invalidDocuments(text: String) {
        #expect(parse(text) == nil)
    }

    @Test func invalidUTF8IsRejected() {
        #expect((try? JSONParser.parse([0x22, 0xFF, 0x22])) == nil)
        #expect((try? JSONParser.parse([0x22, 0xC3, 0xA9, 0x22])) == .string("é"))
    }

    @Test func nestingIsBounded() throws {
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect(parse(ok) != nil)
        let deep = String(repeating: "[", count: JSONParser.maxDepth + 1) + String(repeating: "]", count: JSONParser.maxDepth + 1)
        #expect(parse(deep) == nil)
        #expect(parse(String(repeating: "[", count: 100_000)) == nil)
        #expect(parse(String(repeating: "{\"a\":", count: 100_000)) == nil)
    }

    @Test func integers() throws {
        #expect(JSONValue.number("9223372036854775807").integer == .max)
        #expect(JSONValue.number("-9223372036854775808").integer == .min)
        #expect(JSONValue.number("9223372036854775808").integer == nil)
        #expect(JSONValue.string("99999999999999999999").integer == nil)
        #expect(JSONValue.number("1.0").integer == nil)
        #expect(JSONValue.string("").integer == nil)
        #expect(JSONValue.string("-").integer == nil)
        #expect(JSONValue.string("590047").integer == 590_047)
    }

    @Test func base64() {
        #expect(Base64URL.decode("AQID") == [1, 2, 3])
        #expect(Base64URL.decode("AQI") == [1, 2])
        #expect(Base64URL.decode("AQI=") == [1, 2])
        #expect(Base64URL.decode("-_-_") == Base64URL.decode("+/+/"))
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("A===") == nil)
        #expect(Base64URL.decode("AQ ID") == nil)
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }
}
