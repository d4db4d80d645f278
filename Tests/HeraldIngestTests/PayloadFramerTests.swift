import HeraldTestSupport
import Testing

import HeraldIngest

/// How ingest cuts its input into payloads (`herald ingest`, `POST /v1/ingest`).
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

    @Test func linesAfterAStrayBraceAreNotHeldBack() {
        // As `herald ingest -` reads a live stream: each line is framed when it arrives.
        var framer = PayloadFramer()
        guard case .gathering = framer.feed(ArraySlice("{".utf8), number: 1) else { Issue.record("`{` opens a gathering"); return }
        guard case .gathering = framer.feed(ArraySlice(#"  "type": "notify","#.utf8), number: 2) else { Issue.record("a member goes on"); return }
        guard case .payloads(let framed) = framer.feed(ArraySlice(Self.good.utf8), number: 3) else {
            Issue.record("a one-line payload directly inside an object ends the gathering")
            return
        }
        #expect(framed.map { String(decoding: $0.payload, as: UTF8.self) } == ["{", #"  "type": "notify","#, Self.good])
        #expect(framed.map(\.line) == [1, 2, 3])
        #expect(!framer.isGathering)
        // A stray `{` followed by a pretty-printed document: the stray line is let go as soon
        // as the document's `{` shows it was not one, and the document is framed whole.
        _ = framer.feed(ArraySlice("{".utf8), number: 4)
        guard case .payloads(let stray) = framer.feed(ArraySlice("{".utf8), number: 5) else {
            Issue.record("a `{` directly inside an object ends the gathering")
            return
        }
        #expect(stray.map(\.line) == [4])
        #expect(framer.isGathering)
        _ = framer.feed(ArraySlice(#""type": "revoke", "account": "a""#.utf8), number: 6)
        guard case .payload(let document, let line) = framer.feed(ArraySlice("}".utf8), number: 7) else {
            Issue.record("the document is one payload")
            return
        }
        #expect(line == 5 && String(decoding: document, as: UTF8.self) == "{\n\"type\": \"revoke\", \"account\": \"a\"\n}")
    }

    @Test func documentsWithValuesOnTheirOwnLinesInlineObjectsAndBlankLinesStayWhole() {
        let documents = [
            "{\n  \"type\":\n  \"revoke\",\n  \"x\":\n  {\n    \"y\": 1\n  },\n  \"account\": \"a\"\n}",
            "{\n  \"x\": {\n    \"y\": [\n      {\"z\": 1},\n      2\n    ]\n  },\n\n  \"account\": \"a\"\n}",
        ]
        for document in documents {
            #expect(Self.frame(document + "\n" + Self.good).map(\.0) == [document, Self.good])
        }
    }

    @Test func oneLinePayloadsPassThrough() {
        #expect(Self.frame("\(Self.good)\n{\"a\":\n[1,\n]").map(\.1) == [1, 2, 3, 4])
    }
}
