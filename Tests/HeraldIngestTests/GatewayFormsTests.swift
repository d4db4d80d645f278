import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Matrix mentions and calls, Sygnal's FCM forms and FCM legacy send requests.
///
/// Fixtures are written from: the Matrix Push Gateway API (`/_matrix/push/v1/notify`:
/// `devices[].tweaks.highlight`, `counts`), the Matrix client-server spec "Voice over IP"
/// (`m.call.invite` / `m.call.hangup` / `m.call.reject` / `m.call.answer`, each with
/// `content.call_id`); matrix-org/sygnal `sygnal/gcmpushkin.py` (`_build_data`: the
/// notification's fields in `data`, `content` an object in legacy requests and flattened to
/// `content_<key>` in v1, `prio` high/normal, `unread` and `missed_calls`; legacy bodies with
/// `to` or `registration_ids` and `priority`); Firebase's legacy HTTP protocol reference
/// (`to`, `collapse_key`, `notification` with `title`, `body`, `body_loc_key`,
/// `body_loc_args`).
@Suite("Gateways: Matrix mentions and calls, Sygnal FCM, FCM legacy")
struct GatewayFormsTests {
    static let me = "@me:example.org"
    let a = context(account: "@me:example.org")

    static func matrix(_ fields: String, devices: String = #"[{"app_id":"im.app","pushkey":"k"}]"#) -> String {
        #"{"notification":{"room_id":"!r:example.org","sender":"@alice:example.org",\#(fields),"devices":\#(devices)}}"#
    }

    @Test func aHighlightedEventIsAMention() throws {
        let highlighted = Self.matrix(
            #""event_id":"$m1","type":"m.room.message","content":{"body":"@me hi"}"#,
            devices: #"[{"app_id":"im.app","pushkey":"k","tweaks":{"sound":"default","highlight":true}}]"#)
        guard case .notify(let notify)? = try events(highlighted, nil, a).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.kind == .mention)
        let plain = Self.matrix(
            #""event_id":"$m1","type":"m.room.message","content":{"body":"hi"}"#,
            devices: #"[{"app_id":"im.app","pushkey":"k","tweaks":{"highlight":false}}]"#)
        guard case .notify(let message)? = try events(plain, nil, a).first?.payload else { return }
        #expect(message.kind == .message)
    }

    @Test(arguments: ["m.call.hangup", "m.call.reject", "m.call.answer"])
    func aHangUpEndsTheInvitedCall(type: String) throws {
        let invite = Self.matrix(#""event_id":"$inv","type":"m.call.invite","content":{"call_id":"c-42","version":"1","lifetime":60000}"#)
        guard case .notify(let call)? = try events(invite, .matrix, a).first?.payload else {
            Issue.record("expected the call")
            return
        }
        #expect(call.kind == .call)
        let end = Self.matrix(#""event_id":"$end","type":"\#(type)","content":{"call_id":"c-42","version":"1"}"#)
        #expect(try events(end, .matrix, a) == [Event(account: Self.me, .endCall(chat: call.chat, id: call.id))])
        let noCallId = Self.matrix(#""event_id":"$end","type":"\#(type)","content":{"version":"1"}"#)
        #expect(ingestError(noCallId, .matrix, a)?.field == "notification.content.call_id")
    }

    @Test func negativeCountsAreRejectedNamingTheField() {
        #expect(
            ingestError(#"{"notification":{"counts":{"unread":-1},"devices":[]}}"#, .matrix, a)
                == IngestError(format: .matrix, field: "notification.counts.unread", reason: "must be >= 0, got -1"))
        #expect(
            ingestError(#"{"notification":{"counts":{"missed_calls":"-3"},"devices":[]}}"#, .matrix, a)?.field
                == "notification.counts.missed_calls")
    }

    static let sygnalV1 =
        #"{"message":{"data":{"event_id":"$ev1:example.org","type":"m.room.message","sender":"@alice:example.org","room_name":"Lunch","room_alias":null,"membership":null,"sender_display_name":"Alice","content_msgtype":"m.text","content_body":"see you at noon","room_id":"!room:example.org","prio":"high","unread":"2","missed_calls":"0"},"android":{"priority":"high"},"token":"tok"}}"#
    static let sygnalLegacy =
        #"{"data":{"event_id":"$ev1:example.org","type":"m.room.message","sender":"@alice:example.org","room_name":"Lunch","sender_display_name":"Alice","content":{"msgtype":"m.text","body":"see you at noon"},"room_id":"!room:example.org","prio":"high","unread":2,"missed_calls":0},"priority":"high","to":"tok"}"#

    @Test(arguments: [sygnalV1, sygnalLegacy])
    func sygnalFCMKeepsTheRoomAndTheText(line: String) throws {
        let result = try Ingest.decode(line, format: nil, context: a)
        #expect(result.format == .fcm)
        #expect(
            result.events == [
                Event(
                    account: Self.me,
                    .notify(
                        Event.Notify(
                            chat: "!room:example.org", kind: .message, id: StableID.of("$ev1:example.org"), date: receivedAt,
                            title: "Alice @ Lunch", body: "see you at noon", sender: "Alice"))),
                Event(account: Self.me, .note(source: "matrix", reason: "counts: unread 2, missed_calls 0")),
            ])
    }

    @Test func sygnalFCMCallsRingAndEndAndLowPriorityIsSilent() throws {
        let invite =
            #"{"message":{"data":{"event_id":"$inv","type":"m.call.invite","sender":"@alice:example.org","content_call_id":"c-7","room_id":"!r:example.org","prio":"normal"},"token":"t"}}"#
        guard case .notify(let call)? = try events(invite, .fcm, a).first?.payload else {
            Issue.record("expected a call")
            return
        }
        #expect(call.kind == .call)
        #expect(call.id == StableID.of("c-7"))
        #expect(call.silent)
        let hangup =
            #"{"message":{"data":{"event_id":"$h","type":"m.call.hangup","content_call_id":"c-7","room_id":"!r:example.org","prio":"high"},"token":"t"}}"#
        #expect(try events(hangup, .fcm, a) == [Event(account: Self.me, .endCall(chat: "!r:example.org", id: call.id))])
    }

    @Test func sygnalBadgeOnlyIsACountsNote() throws {
        #expect(
            try events(#"{"message":{"data":{"prio":"high","unread":"3","missed_calls":"1"},"token":"t"}}"#, .fcm, a)
                == [Event(account: Self.me, .note(source: "matrix", reason: "counts: unread 3, missed_calls 1"))])
    }

    @Test func fcmLegacySendRequestsAreAccepted() throws {
        let line =
            #"{"to":"device-token","collapse_key":"chat-5","notification":{"title":"Ada","body":"lunch?"},"data":{"chat":"chat:5","message_id":"77"}}"#
        let result = try Ingest.decode(line, format: nil, context: context(account: "u"))
        #expect(result.format == .fcm)
        #expect(
            result.events == [
                Event(
                    account: "u",
                    .notify(
                        Event.Notify(
                            chat: "chat:5", kind: .message, id: 77, date: receivedAt, partial: true,
                            title: "Ada", body: "lunch?", thread: "chat-5")))
            ])
        let localized =
            #"{"registration_ids":["a","b"],"notification":{"title_loc_key":"T","body_loc_key":"NEW_MSG","body_loc_args":["Ada","lunch?"]}}"#
        guard case .notify(let notify)? = try events(localized, .fcm, context(account: "u")).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.body == "Ada: lunch?")
        #expect(notify.title == "t")
    }
}

/// Detection of the forms added for issue 24, each beside the form it could be taken for.
@Suite("Detection of gateway and device forms")
struct GatewayDetectionTests {
    func detect(_ text: String) -> PayloadFormat? { Ingest.detect(Array(text.utf8)) }

    @Test func eachFormIsDetected() {
        // zerver/lib/push_notifications.py: a legacy FCM request carrying Zulip data stays Zulip.
        #expect(
            detect(#"{"to":"tok","data":{"realm_uri":"https://z.example","user_id":"1","event":"remove","zulip_message_ids":"3"}}"#)
                == .zulip)
        // core.telegram.org/api/push-updates data inside a legacy FCM request stays Telegram.
        #expect(detect(#"{"to":"tok","data":{"loc_key":"MESSAGE_TEXT","custom":{"from_id":"5","msg_id":"1"}}}"#) == .telegram)
        #expect(detect(#"{"to":"tok","notification":{"title":"t","body":"b"}}"#) == .fcm)
        #expect(detect(#"{"registration_ids":["a"],"data":{"event_id":"$e","room_id":"!r"}}"#) == .fcm)
        // Telegram-iOS: flat string ids beside aps; a generic APNs payload with numeric ids stays APNs.
        #expect(detect(#"{"aps":{"alert":"x"},"chat_id":"8","msg_id":"4"}"#) == .telegram)
        #expect(detect(#"{"aps":{"alert":"x"},"chat_id":8,"msg_id":4}"#) == .apns)
        #expect(detect(#"{"loc-key":"READ_HISTORY","from_id":"5","max_id":"3"}"#) == .telegram)
        #expect(
            detect(#"{"aps":{"badge":0},"zulip":{"realm_url":"https://z.example","user_id":1,"event":"remove","zulip_message_ids":"3"}}"#)
                == .zulip)
        #expect(detect(#"{"aps":{"alert":{"loc-key":"MSG_FROM_USER","loc-args":["A"]}},"room_id":"!r","event_id":"$e"}"#) == .apns)
    }
}

/// Sygnal's Web Push payload (matrix-org/sygnal `sygnal/webpushpushkin.py` `_build_payload`:
/// the notification's fields flat, `content` without `formatted_body`, `unread` and
/// `missed_calls`), plain and inside an RFC 8291 body.
@Suite("Sygnal Web Push")
struct SygnalWebPushTests {
    static let plaintext =
        #"{"room_id":"!room:example.org","room_name":"Lunch","event_id":"$ev1:example.org","sender":"@alice:example.org","sender_display_name":"Alice","type":"m.room.message","unread":1,"content":{"msgtype":"m.text","body":"see you at noon"}}"#

    static let expected = [
        Event(
            account: "m",
            .notify(
                Event.Notify(
                    chat: "!room:example.org", kind: .message, id: StableID.of("$ev1:example.org"), date: receivedAt,
                    title: "Alice @ Lunch", body: "see you at noon", sender: "Alice"))),
        Event(account: "m", .note(source: "matrix", reason: "counts: unread 1")),
    ]

    @Test func theFlatPayloadIsAMatrixNotification() throws {
        #expect(Ingest.detect(Array(Self.plaintext.utf8)) == .matrix)
        #expect(try events(Self.plaintext, .matrix, context(account: "m")) == Self.expected)
    }

    @Test func insideAWebPushBody() throws {
        let keys = try Samples.webPushKeys()
        let body = try WebPushCipher.encryptForTests(
            Array(Self.plaintext.utf8), to: keys, senderPrivateKey: try Samples.webPush("as_private"), salt: try Samples.webPush("salt"))
        let result = try Ingest.decode(body, format: .webpush, context: context(account: "m", webPush: keys, innerFormat: .matrix))
        #expect(result.encrypted)
        #expect(result.events == Self.expected)
    }

    /// The FCM v1 requests the servers send (zerver/lib/push_notifications.py builds a
    /// firebase_admin `messaging.Message(data=…, token=…, android=…)`): the app's data under
    /// `message.data` reads as that app's payload.
    @Test func fcmV1RequestsCarryingZulipOrTelegramDataReadAsThoseFormats() throws {
        let zulip =
            #"{"message":{"token":"t","android":{"priority":"high"},"data":{"realm_url":"https://z.example","user_id":"7","event":"remove","zulip_message_ids":"3,4"}}}"#
        #expect(Ingest.detect(Array(zulip.utf8)) == .zulip)
        #expect(try events(zulip, nil, context()) == [Event(account: "zulip:https://z.example/|7", .delete(ids: [3, 4], chat: nil))])
        let telegram =
            #"{"message":{"token":"t","data":{"loc_key":"MESSAGE_TEXT","loc_args":["Ada","hi"],"custom":{"from_id":"5","msg_id":"9"}}}}"#
        #expect(Ingest.detect(Array(telegram.utf8)) == .telegram)
        #expect(
            try events(telegram, nil, context(account: "tg:1")).first.flatMap(Identity.init)
                == Identity(account: "tg:1", chat: "user:5", objectClass: .msg, id: 9))
        #expect(
            ingestError(
                #"{"message":{"data":{"loc_key":"MESSAGE_TEXT","custom":{"from_id":"5","msg_id":"x"}}}}"#, .telegram,
                context(account: "tg:1"))?.field
                == "message.data.custom.msg_id")
    }
}
