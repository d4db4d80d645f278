import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Herald JSONL and detection")
struct HeraldFormatTests {
    @Test func canonicalLineRoundTrips() throws {
        let event = Event(account: "a", .notify(Event.Notify(chat: "c", kind: .mention, id: 3, date: 9, partial: true, title: "t")))
        let result = try Ingest.decode(event.jsonString, format: nil, context: context())
        #expect(result.format == .herald)
        #expect(result.events == [event])
        #expect(try events(event.jsonString, .herald, context(account: "a")) == [event])
    }

    /// Editors may start a file with a UTF-8 byte-order mark; every adapter skips it.
    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        let event = Event(account: "a", .revoke)
        let line = [0xEF, 0xBB, 0xBF] + Array(event.jsonString.utf8)
        #expect(try Ingest.decode(line, format: .herald, context: context()).events == [event])
        #expect(try Ingest.decode(line[...], format: .herald, context: context()).events == [event])
        #expect(try Ingest.decode(line, format: nil, context: context()).events == [event])
    }

    @Test func eventErrorsKeepTheirField() throws {
        #expect(ingestError(#"{"type":"notify","account":"a","chat":"c","kind":"message","id":0,"date":1}"#, .herald, context())
            == IngestError(format: .herald, field: "id", reason: "must be > 0, got 0"))
        #expect(ingestError(#"{"type":"notify","account":"a","chat":"c","kind":"bogus","id":1,"date":1}"#, .herald, context())?.field == "kind")
        #expect(ingestError(#"{"type":"read","account":"a","chat":"c"}"#, .herald, context())?.field == "maxId")
        #expect(ingestError(#"{"type":"revoke","account":"b"}"#, .herald, context(account: "a"))?.field == "account")
        #expect(ingestError("[1,2]", .herald, context())?.reason == "expected a JSON object, got an array")
    }

    @Test func malformedLinesAreWholePayloadErrors() {
        // The event model's decoder does the checking the JSONParser pre-pass used to do.
        let deep = #"{"type":"revoke","account":"a","x":"# + String(repeating: "[", count: 100) + "]}"
        let badUTF8 = Array(#"{"type":"note","account":"a","reason":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        for input in [Array(deep.utf8), badUTF8, Array(#"{"type":"revoke","account":"a"} x"#.utf8)] {
            let error: IngestError?
            do {
                _ = try Ingest.decode(input, format: .herald, context: context())
                error = nil
            } catch let caught {
                error = caught
            }
            #expect(error?.format == .herald && error?.field == "")
            #expect(error?.reason.hasPrefix("invalid JSON at byte ") == true, "\(String(describing: error))")
        }
    }

    @Test func detection() throws {
        func detect(_ text: String) -> PayloadFormat? { Ingest.detect(Array(text.utf8)) }
        #expect(detect(#"{"p":"abc"}"#) == .telegram)
        #expect(detect(#"{"data":{"loc_key":"X"}}"#) == .telegram)
        #expect(detect(#"{"loc_key":"X",}"#) == .telegram)
        #expect(detect(#"{"aps":{}}"#) == .apns)
        #expect(detect(#"{"message":{"token":"t"}}"#) == .fcm)
        #expect(detect(#"{"notification":{"devices":[]}}"#) == .matrix)
        #expect(detect(#"{"realm_uri":"x"}"#) == .zulip)
        #expect(detect(#"{"type":"revoke","account":"a"}"#) == .herald)
        #expect(detect(#"{"hello":1}"#) == nil)
        #expect(detect("not json") == nil)
        #expect(detect("") == nil)
        for (name, format) in Samples.all {
            #expect(Ingest.detect(try Samples.bytes(name)) == format, "\(name)")
        }
        #expect(ingestError(#"{"hello":1}"#, nil, context())?.format == nil)
    }

    @Test func everySampleDecodesToValidEvents() throws {
        for (name, format) in Samples.all {
            let account: String? = format == .telegram || format == .zulip ? nil : "acct"
            let result = try Ingest.decode(try Samples.bytes(name), format: format, context: context(account: account))
            #expect(!result.events.isEmpty, "\(name)")
            for event in result.events { try event.validate() }
        }
    }
}
