import HeraldEvents
import HeraldTestSupport
import Testing

@Suite("Validation and JSON errors")
struct EventValidationTests {
    /// Each bad line and the field its error must name.
    static let badLines: [(String, String)] = [
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":0,"date":1}"#, "id"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":-5,"date":1}"#, "id"),
        (#"{"type":"notify","account":"","chat":"c","kind":"message","id":1,"date":1}"#, "account"),
        (#"{"type":"notify","account":"a","chat":"","kind":"message","id":1,"date":1}"#, "chat"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"story","id":1,"date":1}"#, "kind"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":"1","date":1}"#, "id"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":1}"#, "date"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1,"silent":"yes"}"#, "silent"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1,"title":5}"#, "title"),
        (#"{"type":"teleport","account":"a"}"#, "type"),
        (#"{"account":"a"}"#, "type"),
        (#"{"type":"read","account":"a","chat":"c"}"#, "maxId"),
        (#"{"type":"delete","account":"a","ids":[1,0]}"#, "ids[1]"),
        (#"{"type":"delete","account":"a","ids":[]}"#, "ids"),
        (#"{"type":"delete","account":"a","ids":[1,"x"]}"#, "ids[1]"),
        (#"{"type":"options","account":"a","groupCountMax":26}"#, "groupCountMax"),
        (#"{"type":"options","account":"a","groupCountMax":-1}"#, "groupCountMax"),
        (#"{"type":"options","account":"a","groupSizeMax":0}"#, "groupSizeMax"),
        (#"{"type":"dismiss","account":"a","notificationId":0}"#, "notificationId"),
        (#"{"type":"dismissGroup","account":"a","groupId":1,"maxNotificationId":0}"#, "maxNotificationId"),
        (#"{"type":"chatSettings","account":"a","chat":"c","muted":1}"#, "muted"),
        // SEMANTICS 1.2.
        (#"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":-1}"#, "mutedUntil"),
        (#"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":"tomorrow"}"#, "mutedUntil"),
        (#"{"type":"chatSettings","account":"a","chat":"c","muted":true,"mutedUntil":1764266400}"#, "mutedUntil"),
        (#"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":0,"muted":false}"#, "mutedUntil"),
        (#"{"type":"tick","account":"a","now":-1}"#, "now"),
        (#"{"type":"tick","account":"a"}"#, "now"),
        (#"{"type":"tick","account":"a","now":1.5}"#, "now"),
        (#"{"type":"delete","account":"a","chat":"c","maxId":0}"#, "maxId"),
        (#"{"type":"delete","account":"a","chat":"c","maxId":-3}"#, "maxId"),
        (#"{"type":"delete","account":"a","chat":"c","ids":[1],"maxId":5}"#, "maxId"),
        (#"{"type":"delete","account":"a","chat":"c","maxId":5,"ids":[]}"#, "maxId"),
        (#"{"type":"delete","account":"a","maxId":5}"#, "chat"),
        (#"{"type":"delete","account":"a","chat":"","maxId":5}"#, "chat"),
        (#"{"type":"delete","account":"a","chat":"c"}"#, "ids"),
        (#"{"type":"readMentions","account":"a","chat":"c","ids":[]}"#, "ids"),
        (#"{"type":"readMentions","account":"a","chat":"c","ids":[7,0]}"#, "ids[1]"),
        (#"{"type":"readMentions","account":"a","ids":[7]}"#, "chat"),
        (#"{"type":"readAll","account":"a","chat":""}"#, "chat"),
        (#"{"type":"readAll","account":"a","chat":5}"#, "chat"),
        (#"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1,"unreadOnly":"yes"}"#, "unreadOnly"),
        (#"{"type":"read","account":"a","chat":"c","maxId":0}"#, "maxId"),
        (#"{"type":"revoke"}"#, "account"),
        (#"{"type":"revoke","account":null}"#, "account"),
    ]

    @Test("a bad event names its field", arguments: badLines)
    func namesTheField(line: String, field: String) {
        #expect {
            try Event(json: line)
        } throws: { error in
            (error as? EventError)?.field == field
        }
    }

    @Test("malformed JSON is rejected as a whole document")
    func malformed() {
        for text in ["", "{", "not json", "[1,2]", #"{"type":"revoke","account":"a""#] {
            #expect(throws: EventError.self) { try Event(json: text) }
        }
    }

    @Test("defaults and unknown keys")
    func defaults() throws {
        let event = try Event(json: #"{"seq":9,"recorded":"x","type":"notify","account":"a","chat":"c","kind":"call","id":3,"date":4}"#)
        guard case .notify(let n) = event.payload else { Issue.record("not a notify"); return }
        #expect(n.silent == false && n.partial == false && n.title == nil)
        #expect(event.chat == "c")
        #expect(n.kind.objectClass == .call)
    }

    @Test("the canonical JSON form is compact and ordered")
    func canonicalForm() throws {
        let line = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":2,"partial":true,"title":"T"}"#
        #expect(try Event(json: line).jsonString == line)
    }
}
