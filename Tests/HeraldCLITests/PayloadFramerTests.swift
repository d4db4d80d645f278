import Testing

@testable import herald

/// How `herald ingest` cuts its input into payloads.
@Suite("payload framing")
struct PayloadFramerTests {
    /// The payloads of `text`'s lines as (text, line number), in order.
    static func frame(_ text: String) -> [(String, Int)] {
        var framer = PayloadFramer()
        var framed: [(String, Int)] = []
        func record(_ payload: ArraySlice<UInt8>, _ line: Int) { framed.append((String(decoding: payload, as: UTF8.self), line)) }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            switch framer.feed(ArraySlice(line.utf8), number: index + 1) {
            case .payload(let payload, let number): record(payload, number)
            case .payloads(let payloads): for (payload, number) in payloads { record(payload, number) }
            case .gathering: break
            }
        }
        for (payload, number) in framer.finish() { record(payload, number) }
        return framed
    }

    static let good = #"{"type":"revoke","account":"a"}"#

    @Test func aStrayOpeningBraceCostsOnlyItsOwnLines() {
        let text = [Self.good, "{", #"  "type": "notify","#, Self.good, Self.good, Self.good].joined(separator: "\n")
        let framed = Self.frame(text)
        #expect(framed.map(\.1) == [1, 2, 3, 4, 5, 6])
        #expect(framed.map(\.0) == [Self.good, "{", #"  "type": "notify","#, Self.good, Self.good, Self.good])
    }

    @Test func aPrettyPrintedDocumentIsOnePayload() {
        let document = "{\n  \"type\": \"revoke\",\n  \"x\": {\n    \"y\": [\n      1\n    ]\n  },\n  \"account\": \"a\"\n}"
        let framed = Self.frame(Self.good + "\n" + document + "\n" + Self.good)
        #expect(framed.map(\.1) == [1, 2, 11])
        #expect(framed[1].0 == document)
    }

    @Test func anInnerLoneBraceAtTheSameColumnDoesNotEndTheDocument() {
        let document = "{\n\"data\": {\n\"a\": \"}\"\n}\n}"
        #expect(Self.frame(document).map(\.0) == [document])
    }

    @Test func aByteOrderMarkDoesNotHideTheOpeningBrace() {
        let document = "\u{FEFF}{\n\"type\": \"revoke\",\n\"account\": \"a\"\n}"
        #expect(Self.frame(document).map(\.0) == [document])
    }

    @Test func aClosedDocumentThatIsNotJSONFallsBackToItsLines() {
        #expect(Self.frame("{\n\(Self.good)\n}").map(\.1) == [1, 2, 3])
        // Closing at the opening level on a line that is not a lone closer ends it too.
        #expect(Self.frame("{\n\"a\": 1 }\n\(Self.good)").map(\.1) == [1, 2, 3])
        // A closer of the other kind.
        #expect(Self.frame("[\n1\n}\n\(Self.good)").map(\.1) == [1, 2, 3, 4])
    }

    @Test func aWholeDocumentInsideAStrayBraceIsKept() {
        let document = "{\n  \"type\": \"revoke\",\n  \"account\": \"a\"\n}"
        let framed = Self.frame("{\n\(document)\n\(Self.good)")
        #expect(framed.map(\.0) == ["{", document, Self.good])
        #expect(framed.map(\.1) == [1, 2, 6])
    }

    @Test func oneLinePayloadsPassThrough() {
        #expect(Self.frame("\(Self.good)\n{\"a\":\n[1,\n]").map(\.1) == [1, 2, 3, 4])
    }
}
