import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Zulip's APNs payloads, as the server hands them to the push bouncer.
///
/// Fixtures are written from zulip/zulip zerver/lib/push_notifications.py:
/// `get_base_payload` (server, realm_id, realm_uri, realm_url, realm_name, user_id),
/// `get_message_payload` (sender_id, sender_email, time, recipient_type, stream, stream_id,
/// topic, pm_users), `get_message_payload_apns` (`message_ids: [id]`, alert title / subtitle /
/// body, `custom: {"zulip": …}` which APNs delivers beside `aps`) and
/// `get_remove_payload_apns` (`event: "remove"`, `zulip_message_ids` comma-separated).
@Suite("Zulip on iOS")
struct ZulipAPNsTests {
    static let account = "zulip:https://chat.example.org/|7"
    static let base =
        #""server":"chat.example.org","realm_id":2,"realm_uri":"https://chat.example.org","realm_url":"https://chat.example.org","realm_name":"Example","user_id":7"#

    static let streamMessage =
        ##"{"aps":{"alert":{"title":"#design > logo","subtitle":"Ada Lovelace:","body":"New draft attached"},"sound":"default","badge":0},"zulip":{\##(base),"sender_id":12,"sender_email":"ada@example.org","time":1700000100,"recipient_type":"stream","stream":"design","stream_id":4,"topic":"logo","message_ids":[501]}}"##
    static let directMessage =
        #"{"aps":{"alert":{"title":"Ada Lovelace","subtitle":"","body":"lunch?"},"sound":"default","badge":0},"zulip":{\#(base),"sender_id":12,"sender_email":"ada@example.org","time":1700000200,"recipient_type":"private","message_ids":[502]}}"#
    static let groupDirectMessage =
        #"{"aps":{"alert":{"title":"Ada Lovelace, Bob, Me","subtitle":"Ada Lovelace:","body":"hi all"},"badge":0},"zulip":{\#(base),"sender_id":12,"sender_email":"ada@example.org","time":1700000300,"recipient_type":"private","pm_users":"7,12,13","message_ids":[503]}}"#
    static let remove = #"{"aps":{"badge":0},"zulip":{\#(base),"event":"remove","zulip_message_ids":"501,502"}}"#

    @Test(arguments: [PayloadFormat.zulip, nil])
    func streamMessage(format: PayloadFormat?) throws {
        let result = try Ingest.decode(Self.streamMessage, format: format, context: context())
        #expect(result.format == .zulip)
        #expect(
            result.events == [
                Event(
                    account: Self.account,
                    .notify(
                        Event.Notify(
                            chat: "stream:4:logo", kind: .message, id: 501, date: 1_700_000_100, partial: true,
                            title: "design > logo", body: "New draft attached")))
            ])
    }

    @Test func directMessagesNameTheSenderAndTheUserSet() throws {
        #expect(
            try events(Self.directMessage, nil, context()) == [
                Event(
                    account: Self.account,
                    .notify(
                        Event.Notify(
                            chat: "dm:7,12", kind: .message, id: 502, date: 1_700_000_200, partial: true,
                            title: "Ada Lovelace", body: "lunch?", sender: "Ada Lovelace")))
            ])
        let group = try #require(try events(Self.groupDirectMessage, .zulip, context()).first)
        guard case .notify(let notify) = group.payload else { Issue.record("not a notify"); return }
        #expect(notify.chat == "dm:7,12,13")
        #expect(notify.title == "Ada Lovelace, Bob, Me")
        #expect(notify.sender == nil)
    }

    @Test(arguments: [PayloadFormat.zulip, nil])
    func removeClearsTheListedMessages(format: PayloadFormat?) throws {
        let result = try Ingest.decode(Self.remove, format: format, context: context())
        #expect(result.format == .zulip)
        #expect(result.events == [Event(account: Self.account, .delete(ids: [501, 502], chat: nil))])
    }

    @Test func theSameMessageOnAndroidAndIOSIsOneObject() throws {
        let android =
            #"{"data":{\#(Self.base),"event":"message","zulip_message_id":"501","sender_id":"12","time":"1700000100","recipient_type":"stream","stream":"design","stream_id":"4","topic":"logo","content":"New draft attached","sender_full_name":"Ada Lovelace"}}"#
        let fromAndroid = try #require(try events(android, nil, context()).first.flatMap(Identity.init))
        let fromIOS = try #require(try events(Self.streamMessage, nil, context()).first.flatMap(Identity.init))
        #expect(fromAndroid == fromIOS)
    }

    @Test func aMessageWithoutIdsIsRejectedNamingTheField() {
        let line = Self.streamMessage.replacingOccurrences(of: #","message_ids":[501]"#, with: #","message_ids":[]"#)
        #expect(ingestError(line, .zulip, context())?.field == "zulip.message_ids")
    }
}

/// zulip-flutter's test payload (test/notifications/open_test.dart `messageApnsPayload`) may
/// leave out the channel's name: the alert's title then names the conversation.
@Suite("Zulip on iOS without a channel name")
struct ZulipAPNsWithoutChannelNameTests {
    @Test func theAlertTitleStandsInForTheChannelName() throws {
        let line =
            ##"{"aps":{"alert":{"title":"#design > logo","subtitle":"Ada:","body":"hi"},"sound":"default","badge":0},"zulip":{"server":"zulip.example.cloud","realm_id":4,"realm_uri":"https://chat.example/","realm_url":"https://chat.example/","realm_name":"Test","user_id":7,"sender_id":12,"sender_email":"ada@example","time":1700000000,"message_ids":[9],"recipient_type":"stream","stream_id":4,"topic":"logo"}}"##
        guard case .notify(let notify)? = try events(line, nil, context()).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.title == "#design > logo")
        #expect(notify.chat == "stream:4:logo")
    }
}
