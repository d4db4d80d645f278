import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Localized APNs alerts and the strings tables that render them.
///
/// Alert keys follow Apple's "Generating a remote notification" (`loc-key`, `loc-args`,
/// `title-loc-key`, `title-loc-args`, `subtitle-loc-key`); the Sygnal fixtures follow
/// matrix-org/sygnal `sygnal/apnspushkin.py` (`_get_payload_full`: `MSG_FROM_USER_IN_ROOM_WITH_CONTENT`
/// with sender, room, body; `VOICE_CALL_FROM_USER`; `room_id` and `event_id` beside `aps`).
@Suite("Localized alerts")
struct LocalizedAlertTests {
    let a = context(account: "@me:example.org")

    func notify(_ line: String, strings: LocalizedStrings = LocalizedStrings()) throws -> Event.Notify {
        var context = context(account: "@me:example.org")
        context.strings = strings
        guard case .notify(let notify)? = try events(line, .apns, context).first?.payload else {
            throw IngestError(format: .apns, field: "", reason: "no notify")
        }
        return notify
    }

    static let tom =
        #"{"aps":{"alert":{"title-loc-key":"GAME_PLAY_REQUEST_TITLE","title-loc-args":["Major Tom"],"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Major Tom","I'm floating…"]}}}"#

    @Test func withoutATableTheArgumentsAreJoinedNeverTheKey() throws {
        let notify = try notify(Self.tom)
        #expect(notify.body == "Major Tom: I'm floating…")
        #expect(notify.title == "Major Tom")
        let bare = try self.notify(#"{"aps":{"alert":{"loc-key":"NEW_MESSAGE_ARRIVED"}}}"#)
        #expect(bare.body == "new message arrived")
    }

    @Test func aTableFillsTheFormats() throws {
        let strings = try LocalizedStrings(
            parsing: Array(
                """
                /* Game */
                "GAME_PLAY_REQUEST_TITLE" = "%@ wants to play";
                // positional arguments swap the order
                "GAME_PLAY_REQUEST_FORMAT" = "%2$@ (from %1$@) 100%%";
                """.utf8))
        let notify = try notify(Self.tom, strings: strings)
        #expect(notify.title == "Major Tom wants to play")
        #expect(notify.body == "I'm floating… (from Major Tom) 100%")
    }

    @Test func jsonAndUTF16TablesAreRead() throws {
        let json = try LocalizedStrings(parsing: Array(#"{"K":"%@ said %@"}"#.utf8))
        #expect(json.render(key: "K", args: ["A", "hi"]) == "A said hi")
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in #""K" = "\U00e9%d";"#.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try LocalizedStrings(parsing: utf16).render(key: "K", args: ["3"]) == "é3")
    }

    @Test func surrogatePairEscapesMakeOneCharacter() throws {
        let table = try LocalizedStrings(parsing: Array(#""K" = "\UD83D\UDE80 %@";"#.utf8))
        #expect(table.render(key: "K", args: ["launch"]) == "🚀 launch")
        #expect(throws: IngestError.self) { try LocalizedStrings(parsing: Array(#""K" = "\UD83D\U0041";"#.utf8)) }
        #expect(throws: IngestError.self) { try LocalizedStrings(parsing: Array(#""K" = "\UDE80";"#.utf8)) }
    }

    /// Random tables and formats never trap: each either parses or names its line.
    @Test func randomTablesAndFormatsNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#""=;/*\%@$1dU\n KEY{}:"#.utf8) + [0xD8, 0xFF, 0xFE]
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            if let table = try? LocalizedStrings(parsing: bytes) {
                for key in table.formats.keys { _ = table.render(key: key, args: ["a"]) }
            }
            _ = LocalizedStrings.fill(String(decoding: bytes, as: UTF8.self), args: ["x", "y"])
        }
    }

    @Test func aBrokenTableNamesTheLine() {
        #expect(throws: IngestError(format: nil, field: "strings", reason: "line 2: expected ; after the value of \"B\"")) {
            try LocalizedStrings(parsing: Array("\"A\" = \"a\";\n\"B\" = \"b\"\n".utf8))
        }
        #expect(throws: IngestError.self) { try LocalizedStrings(parsing: Array(#"{"A": 1}"#.utf8)) }
    }

    @Test(arguments: [PayloadFormat.apns, nil])
    func sygnalMessageKeepsTheRoomAndTheText(format: PayloadFormat?) throws {
        let line =
            #"{"aps":{"alert":{"loc-key":"MSG_FROM_USER_IN_ROOM_WITH_CONTENT","loc-args":["Alice","Lunch","see you at noon"]},"badge":3},"room_id":"!room:example.org","event_id":"$ev1:example.org"}"#
        let result = try events(line, format, a)
        guard case .notify(let notify)? = result.first?.payload else {
            Issue.record("expected a notify, got \(result)")
            return
        }
        #expect(notify.chat == "!room:example.org")
        #expect(notify.id == StableID.of("$ev1:example.org"))
        #expect(notify.body == "Alice: Lunch: see you at noon")
        #expect(notify.sender == "Alice")
        #expect(notify.kind == .message)
        #expect(result.last?.payload == .note(source: "apns", reason: "badge 3"))
    }

    @Test func sygnalCallAndTheSameEventFromTheGateway() throws {
        let call = try notify(
            #"{"aps":{"alert":{"loc-key":"VOICE_CALL_FROM_USER","loc-args":["Alice"]}},"room_id":"!room:example.org","event_id":"$call:example.org"}"#
        )
        #expect(call.kind == .call)
        #expect(call.chat == "!room:example.org")
        let gateway =
            #"{"notification":{"event_id":"$ev1:example.org","room_id":"!room:example.org","type":"m.room.message","sender":"@alice:example.org","content":{"msgtype":"m.text","body":"see you at noon"},"devices":[{"app_id":"x","pushkey":"y"}]}}"#
        let apns =
            #"{"aps":{"alert":{"loc-key":"MSG_FROM_USER_WITH_CONTENT","loc-args":["Alice","see you at noon"]}},"room_id":"!room:example.org","event_id":"$ev1:example.org"}"#
        let fromGateway = try #require(try events(gateway, .matrix, a).first.flatMap(Identity.init))
        let fromAPNs = try #require(try events(apns, .apns, a).first.flatMap(Identity.init))
        #expect(fromGateway == fromAPNs)
    }
}

/// Sygnal's APNs event-id-only form (matrix-org/sygnal `sygnal/apnspushkin.py`,
/// `_get_payload_event_id_only`: the device's `default_payload`, `room_id`, `event_id`,
/// `unread_count`, `missed_calls`).
@Suite("Sygnal APNs event-id-only")
struct SygnalAPNsEventIdOnlyTests {
    @Test func anEventIdOnlyPushIsAPartialNotifyOfTheRoomWithItsCounts() throws {
        let line =
            #"{"aps":{"mutable-content":1,"content-available":1},"room_id":"!room:example.org","event_id":"$ev1:example.org","unread_count":2,"missed_calls":1}"#
        #expect(
            try events(line, nil, context(account: "m")) == [
                Event(
                    account: "m",
                    .notify(
                        Event.Notify(
                            chat: "!room:example.org", kind: .message, id: StableID.of("$ev1:example.org"), date: receivedAt, partial: true)
                    )),
                Event(account: "m", .note(source: "apns", reason: "counts: unread 2, missed_calls 1")),
            ])
        #expect(
            ingestError(#"{"aps":{},"room_id":"!r","event_id":"$e","unread_count":-2}"#, .apns, context(account: "m"))?.field
                == "unread_count")
    }
}
