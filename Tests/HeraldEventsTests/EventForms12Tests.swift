import HeraldEvents
import HeraldTestSupport
import Testing

/// The events and fields SEMANTICS 1.2 added (`readAll`, `readMentions`, `delete` with `maxId`,
/// `tick`, `unreadOnly`, `mutedUntil`): their JSON forms, their bytes as
/// `schema/log-format.md` gives them, and the bytes written before 1.2.
@Suite("SEMANTICS 1.2 event forms")
struct EventForms12Tests {
    static let account = "a"

    /// Canonical lines and the events they stand for; each line is also what the event writes.
    static let canonicalLines: [(String, Event)] = [
        (#"{"type":"readAll","account":"a"}"#, Event(account: account, .readAll(chat: nil))),
        (#"{"type":"readAll","account":"a","chat":"c"}"#, Event(account: account, .readAll(chat: "c"))),
        (#"{"type":"readMentions","account":"a","chat":"c"}"#, Event(account: account, .readMentions(chat: "c", ids: nil))),
        (#"{"type":"readMentions","account":"a","chat":"c","ids":[5,6]}"#, Event(account: account, .readMentions(chat: "c", ids: [5, 6]))),
        (#"{"type":"delete","account":"a","chat":"c","maxId":300}"#, Event(account: account, .clearHistory(chat: "c", maxId: 300))),
        (#"{"type":"tick","account":"a","now":1700000000}"#, Event(account: account, .tick(now: 1_700_000_000))),
        (#"{"type":"tick","account":"a","now":0}"#, Event(account: account, .tick(now: 0))),
        (
            #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":2,"silent":true,"unreadOnly":true,"title":"T"}"#,
            Event(account: account, .notify(.init(chat: "c", kind: .message, id: 1, date: 2, silent: true, unreadOnly: true, title: "T")))
        ),
        (
            #"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":1764266400,"disablePinned":true}"#,
            Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1_764_266_400, disablePinned: true)))
        ),
        (#"{"type":"chatSettings","account":"a","chat":"c","muted":true}"#, Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 2_147_483_647)))),
        (#"{"type":"chatSettings","account":"a","chat":"c","muted":false}"#, Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 0)))),
    ]

    @Test("a canonical line decodes to its event and is what the event writes", arguments: canonicalLines)
    func canonicalLine(line: String, event: Event) throws {
        #expect(try Event(json: line) == event)
        #expect(event.jsonString == line)
        #expect(try Event(json: event.jsonString) == event)
    }

    /// Lines that are not canonical but mean an event, and the canonical line it writes.
    static let otherForms: [(String, String)] = [
        // `muted` is the alias of these two dates; they keep the form written before 1.2.
        (#"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":2147483647}"#, #"{"type":"chatSettings","account":"a","chat":"c","muted":true}"#),
        (#"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":0}"#, #"{"type":"chatSettings","account":"a","chat":"c","muted":false}"#),
        (#"{"type":"chatSettings","account":"a","chat":"c","muted":null,"mutedUntil":9}"#, #"{"type":"chatSettings","account":"a","chat":"c","mutedUntil":9}"#),
        (#"{"type":"notify","account":"a","chat":"c","kind":"call","id":1,"date":2,"unreadOnly":false}"#, #"{"type":"notify","account":"a","chat":"c","kind":"call","id":1,"date":2}"#),
        (#"{"maxId":7,"type":"delete","ids":null,"chat":"c","account":"a"}"#, #"{"type":"delete","account":"a","chat":"c","maxId":7}"#),
        (#"{"type":"readAll","account":"a","chat":null,"maxId":3}"#, #"{"type":"readAll","account":"a"}"#),
        (#"{"type":"tick","account":"a","now":5,"date":9}"#, #"{"type":"tick","account":"a","now":5}"#),
    ]

    @Test("other spellings decode to the canonical event", arguments: otherForms)
    func otherForm(line: String, canonical: String) throws {
        let event = try Event(json: line)
        #expect(event.jsonString == canonical)
        #expect(try Event(json: canonical) == event)
    }

    @Test("the muted alias and mutedUntil are one value")
    func mutedAlias() throws {
        #expect(Event.ChatSettings(chat: "c", muted: true) == Event.ChatSettings(chat: "c", mutedUntil: 2_147_483_647))
        #expect(Event.ChatSettings(chat: "c", muted: false) == Event.ChatSettings(chat: "c", mutedUntil: 0))
        #expect(Event.ChatSettings(chat: "c", muted: nil).mutedUntil == nil)
        #expect(Event.ChatSettings(chat: "c", mutedUntil: 2_147_483_647).muted == true)
        #expect(Event.ChatSettings(chat: "c", mutedUntil: 0).muted == false)
        #expect(Event.ChatSettings(chat: "c", mutedUntil: 1_764_266_400).muted == nil)
    }

    @Test("validate() names the field of a constructed event")
    func validateNamesField() {
        let cases: [(Event.Payload, String)] = [
            (.chatSettings(.init(chat: "c", mutedUntil: -1)), "mutedUntil"),
            (.tick(now: -1), "now"),
            (.clearHistory(chat: "c", maxId: 0), "maxId"),
            (.clearHistory(chat: "", maxId: 1), "chat"),
            (.readMentions(chat: "c", ids: []), "ids"),
            (.readMentions(chat: "c", ids: [4, -4]), "ids[1]"),
            (.readMentions(chat: "", ids: nil), "chat"),
            (.readAll(chat: ""), "chat"),
            (.notify(.init(chat: "c", kind: .message, id: 0, date: 1, unreadOnly: true)), "id"),
        ]
        for (payload, field) in cases {
            let error = #expect(throws: EventError.self) { try Event(account: "a", payload).validate() }
            #expect(error?.field == field, "\(payload)")
        }
        for payload: Event.Payload in [.tick(now: 0), .readAll(chat: nil), .readMentions(chat: "c", ids: nil), .clearHistory(chat: "c", maxId: 1)] {
            #expect(throws: Never.self) { try Event(account: "a", payload).validate() }
        }
    }

    // MARK: Bytes

    /// Each new form and its bytes exactly as `schema/log-format.md` documents them.
    static let encodings: [(Event, [UInt8])] = [
        (Event(account: account, .readAll(chat: nil)), [13, 1, 0x61, 0]),
        (Event(account: account, .readAll(chat: "c")), [13, 1, 0x61, 1, 1, 0x63]),
        (Event(account: account, .readMentions(chat: "c", ids: nil)), [14, 1, 0x61, 1, 0x63, 0]),
        (Event(account: account, .readMentions(chat: "c", ids: [5, 300])), [14, 1, 0x61, 1, 0x63, 1, 2, 5, 0xAC, 0x02]),
        (Event(account: account, .tick(now: 1_700_000_000)), [15, 1, 0x61, 0x80, 0xE2, 0xCF, 0xAA, 0x06]),
        (Event(account: account, .tick(now: 0)), [15, 1, 0x61, 0]),
        (Event(account: account, .clearHistory(chat: "c", maxId: 300)), [16, 1, 0x61, 1, 0x63, 0xAC, 0x02]),
        // notify: kind 0, id 7, date 4 (zigzag 8), flags: bit 6 unreadOnly, bit 0 silent.
        (Event(account: account, .notify(.init(chat: "c", kind: .message, id: 7, date: 4, silent: true, unreadOnly: true))), [1, 1, 0x61, 1, 0x63, 0, 7, 8, 0x41]),
        // chatSettings: mute code 3, then the date; disablePinned true (code 2 at bits 4–5).
        (
            Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1_764_266_400, disablePinned: true))),
            [10, 1, 0x61, 1, 0x63, 0x23, 0xA0, 0xA3, 0xA2, 0xC9, 0x06]
        ),
        (Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 2_147_483_647))), [10, 1, 0x61, 1, 0x63, 0x02]),
        (Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 0))), [10, 1, 0x61, 1, 0x63, 0x01]),
        (Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1))), [10, 1, 0x61, 1, 0x63, 0x03, 0x01]),
    ]

    @Test("the new forms' bytes are the documented ones, and decode back", arguments: encodings)
    func documentedBytes(event: Event, bytes: [UInt8]) throws {
        #expect(event.binary == bytes)
        #expect(try Event(binary: bytes) == event)
    }

    /// Bytes written before 1.2, with the mute as a two-bit boolean code, and what they mean now.
    static let bytesBefore12: [([UInt8], Event.ChatSettings)] = [
        ([10, 1, 0x61, 1, 0x63, 0x02], .init(chat: "c", mutedUntil: 2_147_483_647)),
        ([10, 1, 0x61, 1, 0x63, 0x01], .init(chat: "c", mutedUntil: 0)),
        ([10, 1, 0x61, 1, 0x63, 0x16], .init(chat: "c", mutedUntil: 2_147_483_647, disableMentions: false, disablePinned: false)),
        ([10, 1, 0x61, 1, 0x63, 0x29], .init(chat: "c", mutedUntil: 0, disableMentions: true, disablePinned: true)),
        ([10, 1, 0x61, 1, 0x63, 0x08], .init(chat: "c", disableMentions: true)),
    ]

    @Test("a mute written as a boolean before 1.2 reads as its date", arguments: bytesBefore12)
    func booleanMute(bytes: [UInt8], settings: Event.ChatSettings) throws {
        let event = try Event(binary: bytes)
        #expect(event == Event(account: "a", .chatSettings(settings)))
        // It is written back as it was.
        #expect(event.binary == bytes)
    }

    /// Damaged bytes of the new forms, and the reason each must be refused with.
    static let damaged: [([UInt8], String)] = [
        ([17, 1, 0x61], "unknown event tag"),
        ([0xFF, 1, 0x61], "unknown event tag"),
        ([13, 1, 0x61, 2, 1, 0x63], "unknown flags"),
        ([13, 1, 0x61, 1], "unexpected end"),
        ([14, 1, 0x61, 1, 0x63, 2, 1, 5], "unknown flags"),
        ([14, 1, 0x61, 1, 0x63, 1, 0], "decoded event is invalid"),
        ([14, 1, 0x61, 1, 0x63, 1, 3, 5], "count 3 exceeds"),
        ([15, 1, 0x61], "unexpected end"),
        ([15, 1, 0x61, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "decoded event is invalid"),
        ([15, 1, 0x61, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "varint overflows 64 bits"),
        ([16, 1, 0x61, 1, 0x63, 0], "decoded event is invalid"),
        ([16, 1, 0x61, 1, 0x63], "unexpected end"),
        ([1, 1, 0x61, 1, 0x63, 0, 7, 8, 0x80], "unknown flags"),
        ([10, 1, 0x61, 1, 0x63, 0x03], "unexpected end"),
        ([10, 1, 0x61, 1, 0x63, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "decoded event is invalid"),
        ([10, 1, 0x61, 1, 0x63, 0x43], "unknown flags"),
    ]

    @Test("damaged bytes of the new forms are refused", arguments: damaged)
    func damagedBytes(bytes: [UInt8], reason: String) {
        let error = #expect(throws: ByteReader.Malformed.self) { try Event(binary: bytes) }
        #expect(error?.reason.hasPrefix(reason) == true, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test("a bad setting code is reported at the settings byte, after a mute date too")
    func badSettingCodeOffset() {
        // Mute code 3 and its date, then disableMentions with the unused code 3.
        let error = #expect(throws: ByteReader.Malformed.self) { try Event(binary: [10, 1, 0x61, 1, 0x63, 0x0F, 0x05]) }
        #expect(error?.reason == "bad setting code")
        #expect(error?.offset == 5)
    }

    @Test("every single-byte change of a new form is refused or decodes to a valid event")
    func everyByteChange() {
        for (event, _) in Self.encodings {
            let bytes = event.binary
            for index in bytes.indices {
                for change in UInt8(1)...255 {
                    var damaged = bytes
                    damaged[index] ^= change
                    if let decoded = try? Event(binary: damaged) {
                        #expect(throws: Never.self) { try decoded.validate() }
                        // What decodes is what its own bytes say.
                        #expect((try? Event(binary: decoded.binary)) == decoded)
                    }
                }
            }
        }
    }
}
