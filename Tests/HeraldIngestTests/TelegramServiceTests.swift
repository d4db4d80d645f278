import HeraldEvents
import HeraldProjection
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Telegram's call, secret-chat, announcement, reaction and pin pushes.
///
/// Fixtures are written from tdlib/td `td/telegram/NotificationManager.cpp`
/// (`process_push_notification_payload`: `MESSAGE_ANNOUNCEMENT` with `message` and
/// `custom.announcement`, shown as a service notification; `encryption_id` / `random_id` of
/// secret chats; `PHONE_CALL_*` and `VIDEO_CALL_*` handled together; `PINNED_*` in groups
/// with the chat's title as the last argument; `chat_from_id` naming a group member) and
/// from core.telegram.org/api/push-updates (the loc_key list and its argument orders).
@Suite("Telegram calls, secret chats and service pushes")
struct TelegramServiceTests {
    let a = context(account: "tg:1")

    func decoded(_ line: String) throws -> [Event.Payload] { try events(line, .telegram, a).map(\.payload) }

    func notify(_ line: String) throws -> Event.Notify {
        let payloads = try decoded(line)
        guard payloads.count == 1, case .notify(let notify) = payloads[0] else {
            throw IngestError(format: .telegram, field: "", reason: "expected one notify, got \(payloads)")
        }
        return notify
    }

    @Test(arguments: ["PHONE_CALL_REQUEST", "VIDEO_CALL_REQUEST"])
    func callRequestsRing(locKey: String) throws {
        let call = try notify(#"{"loc_key":"\#(locKey)","loc_args":["Ada"],"custom":{"from_id":"5","call_id":"6001","call_ah":"-9"}}"#)
        #expect(call.kind == .call)
        #expect(call.id == 6001)
        #expect(call.chat == "user:5")
        #expect(call.title == "Ada")
    }

    @Test(arguments: ["PHONE_CALL_MISSED", "VIDEO_CALL_MISSED", "PHONE_CALL_DECLINE"])
    func missedAndDeclinedCallsEndTheCall(locKey: String) throws {
        #expect(
            try decoded(#"{"loc_key":"\#(locKey)","loc_args":["Ada"],"custom":{"from_id":"5","call_id":"6001"}}"#)
                == [.endCall(chat: "user:5", id: 6001)])
    }

    @Test func aMissedCallWithItsServiceMessageAlsoNotifiesTheMessage() throws {
        let payloads = try decoded(
            #"{"loc_key":"PHONE_CALL_MISSED","loc_args":["Ada"],"custom":{"from_id":"5","call_id":"6001","msg_id":"88"}}"#)
        #expect(payloads.count == 2)
        #expect(payloads.first == .endCall(chat: "user:5", id: 6001))
        guard case .notify(let message)? = payloads.last else {
            Issue.record("expected the missed-call message")
            return
        }
        #expect(message.kind == .message)
        #expect(message.id == 88)
        #expect(message.body == "missed call")
    }

    @Test func aMissedCallNamingNoCallIsANote() throws {
        guard
            case .note(_, let reason)? = try decoded(#"{"loc_key":"VIDEO_CALL_MISSED","loc_args":["Ada"],"custom":{"from_id":"5"}}"#).first
        else {
            Issue.record("expected a note")
            return
        }
        #expect(reason?.hasPrefix("VIDEO_CALL_MISSED") == true)
    }

    @Test func anEncryptedMessageNotifiesItsSecretChat() throws {
        let secret = try notify(
            #"{"loc_key":"ENCRYPTED_MESSAGE","loc_args":["Ada"],"custom":{"encryption_id":"31","random_id":"-8123456789"}}"#)
        #expect(secret.kind == .secretChat)
        #expect(secret.chat == "secret:31")
        #expect(secret.id == StableID.of("random_id:-8123456789"))
        #expect(secret.title == "Ada")
        #expect(secret.body == "new secret message")
        let positive = try notify(#"{"loc_key":"ENCRYPTED_MESSAGE","loc_args":["Ada"],"custom":{"encryption_id":"31","random_id":"444"}}"#)
        #expect(positive.id == 444)
        let noRandomId = try notify(#"{"loc_key":"ENCRYPTED_MESSAGE","loc_args":["Ada"],"custom":{"encryption_id":"31"}}"#)
        #expect(noRandomId.id == 31)
    }

    @Test func anAnnouncementComesFromTheServiceAccount() throws {
        let line =
            #"{"data":{"loc_key":"MESSAGE_ANNOUNCEMENT","loc_args":[],"message":"New in Telegram: folders","custom":{"announcement":"5"}}}"#
        #expect(
            try notify(line)
                == Event.Notify(
                    chat: "user:777000", kind: .message, id: StableID.of("announcement:5"), date: receivedAt, partial: true,
                    title: "Telegram", body: "New in Telegram: folders", sender: "Telegram"))
        guard case .note? = try decoded(#"{"loc_key":"MESSAGE_ANNOUNCEMENT","custom":{"announcement":"5"}}"#).first else {
            Issue.record("an announcement without text shows nothing")
            return
        }
    }

    /// TDLib keeps one reaction notification per message: a reaction push is that object
    /// (the message id), created by the first reaction and shown with the newest one's text
    /// after, and `READ_REACTION` of the message clears it, in groups as in private chats.
    @Test func reactionsOnOneMessageAreOneNotificationShowingTheNewest() throws {
        func reaction(_ from: String, _ name: String, _ emoji: String) throws -> [Event.Payload] {
            try decoded(
                #"{"loc_key":"CHAT_REACT_TEXT","loc_args":["\#(name)","Team","hi","\#(emoji)"],"custom":{"chat_id":"8","msg_id":"40","chat_from_id":"\#(from)"}}"#
            )
        }
        let ada = try reaction("11", "Ada", "👍")
        let bob = try reaction("12", "Bob", "🎉")
        guard case .notify(let first)? = ada.first, case .edit(let edit)? = bob.last, case .notify(let second)? = bob.first else {
            Issue.record("a reaction is a notify and an edit: \(ada), \(bob)")
            return
        }
        #expect(first.kind == .reaction && first.id == 40 && second.id == 40 && first.chat == second.chat)
        #expect(edit.kind == .reaction && edit.id == 40 && edit.partial && edit.body == second.body)
        // Replayed, the notification shows Bob's reaction, and READ_REACTION clears it.
        let read = try decoded(#"{"loc_key":"READ_REACTION","custom":{"chat_id":"8","msg_id":"40"}}"#)
        #expect(read == [.readReactions(chat: first.chat, ids: [40])])
        var projection = Projection()
        var seq: UInt64 = 0
        for payload in ada + bob {
            seq += 1
            _ = projection.apply(Event(account: "tg:1", payload), seq: seq)
        }
        let shown = projection.activeNotifications(account: "tg:1").flatMap(\.notifications)
        #expect(shown.count == 1 && shown[0].body == second.body && second.body != first.body, "\(shown)")
        for payload in read {
            seq += 1
            _ = projection.apply(Event(account: "tg:1", payload), seq: seq)
        }
        #expect(projection.activeNotifications(account: "tg:1").isEmpty)
        // In a private chat likewise.
        let direct = try decoded(#"{"loc_key":"REACT_TEXT","loc_args":["Ada","hi","👍"],"custom":{"from_id":"5","msg_id":"40"}}"#)
        guard case .notify(let private_)? = direct.first else { Issue.record("\(direct)"); return }
        #expect(private_.kind == .reaction && private_.id == 40)
    }

    @Test func aGroupPinDoesNotPutTheGroupTitleInTheBody() throws {
        let pin = try notify(
            #"{"loc_key":"PINNED_TEXT","loc_args":["Ada","release notes","Team"],"custom":{"chat_id":"8","msg_id":"41","chat_from_id":"11"}}"#
        )
        #expect(pin.kind == .pinned)
        #expect(pin.title == "Ada @ Team")
        #expect(pin.sender == "Ada")
        #expect(pin.body == "pinned text: release notes")
        let noText = try notify(
            #"{"loc_key":"PINNED_NOTEXT","loc_args":["Ada","Team"],"custom":{"chat_id":"8","msg_id":"42","chat_from_id":"11"}}"#)
        #expect(noText.title == "Ada @ Team")
        #expect(noText.body == "pinned message")
        let privatePin = try notify(#"{"loc_key":"PINNED_TEXT","loc_args":["Ada","release notes"],"custom":{"from_id":"5","msg_id":"41"}}"#)
        #expect(privatePin.title == "Ada")
        #expect(privatePin.body == "pinned text: release notes")
    }

    @Test(arguments: ["STORY_NOTEXT", "READ_STORIES", "LOCKED_MESSAGE", "AUTH_UNKNOWN", "OAUTH_REQUEST"])
    func keysWithoutNotificationStateAreNotesNamingTheKey(locKey: String) throws {
        guard case .note(let source, let reason)? = try decoded(#"{"loc_key":"\#(locKey)","custom":{"from_id":"5","msg_id":"3"}}"#).first
        else {
            Issue.record("expected a note")
            return
        }
        #expect(source == "telegram")
        #expect(reason?.hasPrefix(locKey) == true)
    }

    /// TDLib takes the send time from the `date` beside `data` or from FCM's
    /// `google.sent_time` (milliseconds), each only within 28 days before and 5 seconds after
    /// the receive time.
    @Test func fcmDeliveryTimesDateThePush() throws {
        func date(_ outer: String, _ inner: String) throws -> Int64 {
            try notify(
                #"{\#(outer)"data":{"loc_key":"MESSAGE_TEXT","loc_args":["Ada","hi"],\#(inner)"custom":{"from_id":"5","msg_id":"7"}}}"#
            ).date
        }
        #expect(try date(#""date":\#(receivedAt - 60),"#, "") == receivedAt - 60)
        #expect(try date("", #""google.sent_time":"\#((receivedAt - 30) * 1000)","#) == receivedAt - 30)
        #expect(try date(#""date":\#(receivedAt - 40 * 86_400),"#, "") == receivedAt)
        #expect(try date(#""date":\#(receivedAt + 3600),"#, "") == receivedAt)
        #expect(try date(#""date":\#(receivedAt - 60),"#, #""google.sent_time":"\#((receivedAt - 30) * 1000)","#) == receivedAt - 60)
    }
}
