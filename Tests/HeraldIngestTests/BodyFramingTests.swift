import HeraldIngest
import HeraldStore
import HeraldTestSupport
import Testing

/// How a whole body held in memory (an HTTP request's) is cut into payloads.
@Suite("body framing")
struct BodyFramingTests {
    static let first = #"{"type":"revoke","account":"a"}"#
    static let second = #"{ "account" : "b", "type" : "revoke" }"#

    static func frame(_ text: String, wholeDocument: Bool = false) throws(PayloadFramer.BodyError) -> [(String, Int)] {
        try PayloadFramer.payloads(inBody: Array(text.utf8), wholeDocument: wholeDocument).map {
            (String(decoding: $0.payload, as: UTF8.self), $0.line)
        }
    }

    @Test("an array's elements are the bytes written in the body, numbered from 0")
    func arrayElementsAsWritten() throws {
        let framed = try Self.frame("\u{FEFF} [\n  \(Self.first),\n\t\(Self.second)\n]\n")
        #expect(framed.map(\.0) == [Self.first, Self.second])
        #expect(framed.map(\.1) == [0, 1])
    }

    @Test("a payload has the same digest alone and as an element of an array")
    func sameDigestAloneOrInArray() throws {
        let alone = try PayloadFramer.payloads(inBody: Array(Self.second.utf8), wholeDocument: false)
        let inArray = try PayloadFramer.payloads(inBody: Array("[\(Self.first), \(Self.second)]".utf8), wholeDocument: false)
        let decoder = PayloadDecoder(format: .herald, context: IngestContext(receivedAt: 0))
        let sourceAlone = try decoder.decode(alone[0].payload).source
        let sourceInArray = try decoder.decode(inArray[1].payload).source
        #expect(sourceAlone == sourceInArray)
        #expect(sourceAlone == Source(format: "herald", payload: Array(Self.second.utf8)))
    }

    @Test("lines: blank ones left out, CR dropped, numbered from 1; a pretty-printed document is one payload")
    func lines() throws {
        let pretty = "{\n  \"type\": \"revoke\",\n  \"account\": \"c\"\n}"
        let framed = try Self.frame(Self.first + "\r\n\n  \n" + pretty + "\n" + Self.second + "\n")
        #expect(framed.map(\.0) == [Self.first, pretty, Self.second])
        #expect(framed.map(\.1) == [1, 4, 8])
    }

    @Test("a whole document is one payload from its first non-blank byte; an empty body has none")
    func wholeDocument() throws {
        #expect(try Self.frame("\n  {\"type\":\n\"revoke\"}\n", wholeDocument: true).map(\.0) == ["{\"type\":\n\"revoke\"}\n"])
        #expect(try Self.frame(" \n", wholeDocument: true).isEmpty)
    }

    @Test("an array that is not JSON, or holds a scalar, is refused naming the part at fault")
    func badArrays() throws {
        #expect(throws: PayloadFramer.BodyError.self) { try Self.frame("[\(Self.first),") }
        do {
            _ = try Self.frame("[\(Self.first), 3]")
            Issue.record("a scalar element is refused")
        } catch {
            #expect(error == PayloadFramer.BodyError(field: "[1]", reason: "expected an event object"))
        }
    }
}
