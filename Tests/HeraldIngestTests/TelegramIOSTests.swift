import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Telegram's iOS payloads: what Telegram-iOS's notification service extension reads.
///
/// Fixtures are written from TelegramMessenger/Telegram-iOS
/// `Telegram/NotificationService/Sources/NotificationService.swift`: flat string fields
/// `from_id`, `chat_id`, `channel_id`, `encryption_id`, `msg_id`, `topic_id`, `topic_title`,
/// `silent` beside `aps`; the text in `aps.alert` (`title`/`subtitle`/`body`, or a string);
/// `loc-key` (with a hyphen) at the top level for `MESSAGE_DELETED` (`msg_id` or
/// `messages`), `READ_HISTORY` (`max_id`), `READ_REACTION`, `SESSION_REVOKE`; a reaction
/// marked by `r` / `react_emoji`; a call by `call_id`, `call_ah` and `updates`.
@Suite("Telegram on iOS")
struct TelegramIOSTests {
    let a = context(account: "tg:1")

    func only(_ line: String, format: PayloadFormat? = .telegram) throws -> Event.Payload {
        let result = try events(line, format, a)
        try #require(result.count == 1, "expected one event, got \(result)")
        return result[0].payload
    }

    @Test(arguments: [PayloadFormat.telegram, nil])
    func aPrivateMessageTakesItsTextFromTheAlert(format: PayloadFormat?) throws {
        let line =
            #"{"aps":{"alert":{"title":"Ada","body":"see you at 6"},"sound":"0.m4a","mutable-content":1,"thread-id":"5"},"from_id":"5","msg_id":"901","silent":"1"}"#
        #expect(Ingest.detect(Array(line.utf8)) == .telegram)
        #expect(
            try only(line, format: format)
                == .notify(
                    Event.Notify(
                        chat: "user:5", kind: .message, id: 901, date: receivedAt, silent: true, partial: true,
                        title: "Ada", body: "see you at 6", sender: "Ada")))
    }

    @Test func aTopicMessageKeepsTheTopicAndItsTitle() throws {
        let line =
            #"{"aps":{"alert":{"title":"Ada","subtitle":"Team","body":"ship it"}},"channel_id":"77","msg_id":"12","topic_id":"3","topic_title":"Release"}"#
        #expect(
            try only(line)
                == .notify(
                    Event.Notify(
                        chat: "channel:77", kind: .message, id: 12, date: receivedAt, partial: true,
                        title: "Release (Ada: Team)", body: "ship it", thread: "topic:3")))
    }

    @Test func aStringAlertIsTheBody() throws {
        guard case .notify(let notify) = try only(#"{"aps":{"alert":"Ada: hi"},"chat_id":"8","msg_id":"4"}"#) else {
            Issue.record("not a notify")
            return
        }
        #expect(notify.chat == "chat:8")
        #expect(notify.body == "Ada: hi")
        #expect(notify.title == nil)
    }

    @Test func actionsUseTheHyphenatedKey() throws {
        #expect(
            try only(#"{"loc-key":"MESSAGE_DELETED","chat_id":"8","messages":"4,5"}"#)
                == .delete(ids: [4, 5], chat: "chat:8"))
        #expect(
            try only(#"{"aps":{},"loc-key":"MESSAGE_DELETED","from_id":"5","msg_id":"9"}"#, format: nil)
                == .delete(ids: [9], chat: "user:5"))
        #expect(
            try only(#"{"loc-key":"READ_HISTORY","channel_id":"77","max_id":"40"}"#, format: nil)
                == .read(chat: "channel:77", maxId: 40))
        #expect(
            try only(#"{"loc-key":"READ_REACTION","from_id":"5","msg_id":"9"}"#)
                == .readReactions(chat: "user:5", ids: [9]))
        guard case .note(_, let reason) = try only(#"{"loc-key":"SESSION_REVOKE"}"#) else {
            Issue.record("a plain SESSION_REVOKE must stay a note")
            return
        }
        #expect(reason?.contains("encrypted") == true)
    }

    @Test func aLocalizedAlertIsRenderedLikeAndroid() throws {
        let iOS = #"{"aps":{"alert":{"loc-key":"CHAT_MESSAGE_TEXT","loc-args":["Ada","Team","hello"]}},"chat_id":"8","msg_id":"4"}"#
        let android = #"{"data":{"loc_key":"CHAT_MESSAGE_TEXT","loc_args":["Ada","Team","hello"],"custom":{"chat_id":"8","msg_id":"4"}}}"#
        #expect(try only(iOS) == only(android))
        guard case .notify(let notify) = try only(iOS) else { return }
        #expect(notify.title == "Ada @ Team")
        #expect(notify.body == "hello")
    }

    @Test func reactionsAreMarkedByRorReactEmoji() throws {
        let line = #"{"aps":{"alert":{"title":"Ada","body":"👍 to your message"},"category":"t","r":1},"from_id":"5","msg_id":"9"}"#
        // The message's reaction notification, and an edit showing this reaction's text when
        // it already exists (see TelegramServiceTests).
        let result = try events(line, .telegram, a).map(\.payload)
        guard result.count == 2, case .notify(let notify) = result[0], case .edit(let edit) = result[1] else {
            Issue.record("not a notify and an edit: \(result)")
            return
        }
        #expect(notify.kind == .reaction && notify.id == 9)
        #expect(notify.chat == "user:5")
        #expect(edit.kind == .reaction && edit.id == 9 && edit.body == notify.body)
    }

    @Test func aCallPushRings() throws {
        let line =
            #"{"aps":{"alert":{"title":"Ada","body":"is calling you"}},"from_id":"5","call_id":"6001","call_ah":"-77","updates":"AAAA"}"#
        guard case .notify(let notify) = try only(line) else {
            Issue.record("not a notify")
            return
        }
        #expect(notify.kind == .call)
        #expect(notify.id == 6001)
    }

    @Test func aPushWithNothingToShowIsANoteSayingSo() throws {
        guard case .note(let source, let reason) = try only(#"{"aps":{"content-available":1},"from_id":"5"}"#) else {
            Issue.record("expected a note")
            return
        }
        #expect(source == "telegram")
        #expect(reason?.contains("aps.alert") == true)
    }

    @Test func iOSFieldErrorsNameTheFlatField() {
        #expect(ingestError(#"{"aps":{"alert":"x"},"from_id":"5","msg_id":"nine"}"#, .telegram, a)?.field == "msg_id")
        #expect(ingestError(#"{"aps":{"alert":7},"from_id":"5","msg_id":"9"}"#, .telegram, a)?.field == "aps.alert")
    }

    /// The VoIP payload Telegram-iOS's extension reports to CallKit (`call_id`, `call_ah`,
    /// `from_id`, `updates`; no alert) rings like `PHONE_CALL_REQUEST`.
    @Test(arguments: [PayloadFormat.telegram, nil])
    func theVoIPPayloadRings(format: PayloadFormat?) throws {
        let line = #"{"call_id":"6001","call_ah":"-77","from_id":"5","updates":"AAAA"}"#
        guard case .notify(let call) = try only(line, format: format) else {
            Issue.record("not a notify")
            return
        }
        #expect(call.kind == .call)
        #expect(call.id == 6001)
        #expect(call.chat == "user:5")
    }

    /// Telegram-iOS counts any non-zero `silent` as silent, TDLib any `silent` at all.
    @Test func silentIsLenientLikeTheClients() throws {
        func silent(_ value: String) throws -> Bool? {
            guard case .notify(let notify) = try only(#"{"aps":{"alert":"x"},"from_id":"5","msg_id":"9","silent":\#(value)}"#) else {
                return nil
            }
            return notify.silent
        }
        #expect(try silent(#""1""#) == true)
        #expect(try silent(#""2""#) == true)
        #expect(try silent(#""0""#) == false)
        #expect(try silent("true") == true)
    }

    /// A secret chat's alert-only push: no msg_id, the chat named by `encryption_id`.
    @Test func aSecretChatAlertNotifiesTheSecretChat() throws {
        guard
            case .notify(let notify) = try only(
                #"{"aps":{"alert":{"title":"Ada","body":"New message"}},"from_id":"5","encryption_id":"31","random_id":"77"}"#)
        else {
            Issue.record("not a notify")
            return
        }
        #expect(notify.kind == .secretChat)
        #expect(notify.chat == "secret:31")
        #expect(notify.id == 77)
        #expect(notify.body == "New message")
    }
}
