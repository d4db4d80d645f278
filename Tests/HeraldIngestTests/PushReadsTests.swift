import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Telegram and Zulip removals and edits checked against SEMANTICS 1.2.
///
/// Payloads are written from core.telegram.org/api/push-updates (`custom.edit_date`,
/// `READ_HISTORY` with `max_id`), Telegram-iOS's notification payload (`aps.alert` beside the
/// ids), TDLib's `NotificationManager::process_push_notification_payload` (`READ_HISTORY` calls
/// `read_history_inbox`, which removes message notifications but not mention ones; no push key
/// reads mentions; `MESSAGE_MUTED` makes TDLib load the chat from the server) and Zulip's
/// `zerver/lib/push_notifications.py` (`get_remove_payload_gcm`: `event` `remove`,
/// `zulip_message_ids`, no conversation).
@Suite("Push reads and edits under SEMANTICS 1.2")
struct PushReadsTests {
    let a = context(account: "a")

    /// The first event's payload of `line`.
    func first(_ line: String, _ format: PayloadFormat? = nil, _ context: IngestContext? = nil) throws -> Event.Payload? {
        try events(line, format, context ?? a).first?.payload
    }

    @Test(arguments: [
        (
            #"{"loc_key":"MESSAGE_TEXT","loc_args":["Ada","hi"],"custom":{"from_id":"5","msg_id":"9"}}"#,
            #"{"loc_key":"MESSAGE_TEXT","loc_args":["Ada","hello"],"custom":{"from_id":"5","msg_id":"9","edit_date":"1700000001"}}"#
        ),
        (
            #"{"aps":{"alert":{"title":"Ada","body":"hi"}},"from_id":"5","msg_id":"9"}"#,
            #"{"aps":{"alert":{"title":"Ada","body":"hello"}},"from_id":"5","msg_id":"9","edit_date":"1700000001"}"#
        ),
    ])
    func aTelegramPushEditIsPartialLikeThePushItEdits(message: String, edit: String) throws {
        guard case .notify(let notify)? = try first(message), case .edit(let change)? = try first(edit) else {
            Issue.record("expected a notify and an edit")
            return
        }
        #expect(notify.partial && change.partial)
        #expect(change.id == notify.id && change.chat == notify.chat && change.kind == notify.kind)
        #expect(change.body == "hello")
    }

    @Test func telegramsHistoryReadIsAReadNotAMentionRead() throws {
        // TDLib's read_history_inbox leaves mention notifications; SEMANTICS 1.2's `read` too.
        #expect(
            try events(#"{"loc_key":"READ_HISTORY","custom":{"chat_id":"5","max_id":"40"}}"#, .telegram, a)
                == [Event(account: "a", .read(chat: "chat:5", maxId: 40))])
    }

    @Test func zulipRemoveDeletesTheMentionedMessageInEveryChat() throws {
        let mention =
            #"{"server":"zulip.example.com","realm_id":"4","realm_uri":"https://zulip.example.com/","user_id":"234","event":"message","zulip_message_id":"123","recipient_type":"stream","stream":"dev","stream_id":"5","topic":"ci","sender_id":"9","sender_full_name":"Ada","trigger":"mentioned","content":"@**Me** look","time":"1754390000"}"#
        let remove =
            #"{"server":"zulip.example.com","realm_id":"4","realm_uri":"https://zulip.example.com/","user_id":"234","event":"remove","zulip_message_ids":"123,124","zulip_message_id":"123"}"#
        guard case .notify(let notify)? = try first(mention, .zulip, context()) else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.kind == .mention)
        // The remove names no conversation: a `delete` without chat, which SEMANTICS 1.2 §6
        // makes clear the mention notification and end the unread mention in whatever chat.
        #expect(
            try events(remove, .zulip, context()) == [
                Event(account: "zulip:https://zulip.example.com/|234", .delete(ids: [notify.id, 124], chat: nil))
            ])
    }
}
