import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Zulip")
struct ZulipTests {
    static let e2eeAccount = "zulip:http://zulip.testserver/|10"
    static let legacyAccount = "zulip:https://zulip.example.com/|234"

    func decode(_ name: String, account: String? = nil) throws -> IngestResult {
        try Ingest.decode(try Samples.bytes(name), format: nil, context: context(account: account))
    }

    @Test func channelMessageWithGroupMention() throws {
        let result = try decode("zulip/e2ee-channel-message.json")
        #expect(result.format == .zulip)
        #expect(result.events == [
            Event(account: Self.e2eeAccount, .notify(Event.Notify(
                chat: "stream:10:test", kind: .mention, id: 45, date: 1_754_385_395, partial: true,
                title: "Denmark > test", body: "@test_user_group", sender: "aaron")))
        ])
    }

    @Test func directMessage() throws {
        #expect(try decode("zulip/e2ee-direct-message.json").events == [
            Event(account: Self.e2eeAccount, .notify(Event.Notify(
                chat: "dm:6,10,12,15", kind: .message, id: 46, date: 1_754_385_290, partial: true,
                title: "aaron", body: "test content", sender: "aaron")))
        ])
    }

    @Test func removeIsADeleteWithoutChat() throws {
        #expect(try decode("zulip/e2ee-remove.json").events == [Event(account: Self.e2eeAccount, .delete(ids: [31, 32], chat: nil))])
        #expect(try decode("zulip/legacy-fcm-remove.json").events == [Event(account: Self.legacyAccount, .delete(ids: [123, 234], chat: nil))])
    }

    @Test func testIsANote() throws {
        #expect(try decode("zulip/e2ee-test.json").events == [
            Event(account: Self.e2eeAccount, .note(source: "zulip", reason: "test notification"))
        ])
    }

    @Test func legacyStreamMessage() throws {
        #expect(try decode("zulip/legacy-fcm-stream-message.json", account: Self.legacyAccount).events == [
            Event(account: Self.legacyAccount, .notify(Event.Notify(
                chat: "stream:42:play", kind: .message, id: 12345, date: 1_546_300_800, partial: true,
                title: "denmark > play", body: "This is a message", sender: "A Sender")))
        ])
    }

    @Test func accountMatchesTheConformanceForm() throws {
        let line = #"{"realm_url":"https://chat.example/","user_id":10,"type":"test"}"#
        #expect(try events(line, .zulip, context()).first?.account == "zulip:https://chat.example/|10")
        #expect(ingestError(line, .zulip, context(account: "zulip:https://chat.example/|11"))?.field == "user_id")
    }

    @Test func legacyOneToOneAndGroupDirectMessages() throws {
        let oneToOne = #"{"realm_uri":"https://z.example/","user_id":"5","event":"message","recipient_type":"private","sender_id":"9","zulip_message_id":"3","content":"hi"}"#
        #expect(try events(oneToOne, nil, context()).first?.chat == "dm:5,9")
        let group = #"{"realm_uri":"https://z.example/","user_id":"5","event":"message","recipient_type":"private","sender_id":"9","pm_users":"9,5,11","zulip_message_id":"3","trigger":"mentioned"}"#
        guard case .notify(let n) = try events(group, nil, context()).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(n.chat == "dm:5,9,11")
        #expect(n.kind == .mention)
    }

    @Test func wrappersAreAccepted() throws {
        let wrapped = #"{"push_account_id":7,"push_key_id":3,"data":{"realm_url":"https://chat.example","user_id":10,"type":"remove","message_ids":[1]}}"#
        #expect(try events(wrapped, nil, context()) == [Event(account: "zulip:https://chat.example/|10", .delete(ids: [1], chat: nil))])
        let beside = #"{"push_account_id":7,"realm_url":"https://chat.example/","user_id":10,"type":"test"}"#
        #expect(try events(beside, nil, context()).count == 1)
        // Encrypted, with no key for it: named by its key id (see ZulipE2EETests).
        let encrypted = #"{"push_account_id":7,"push_key_id":3,"encrypted_data":"AAAA"}"#
        #expect(ingestError(encrypted, nil, context())?.field == "push_key_id")
    }

    @Test func errorsNameTheField() throws {
        let base = #""realm_url":"https://chat.example/","user_id":10,"type":"message""#
        #expect(ingestError(#"{\#(base),"recipient_type":"channel","channel_id":1,"topic":"t"}"#, .zulip, context())?.field == "message_id")
        #expect(ingestError(#"{\#(base),"message_id":1,"recipient_type":"channel","topic":"t"}"#, .zulip, context())?.field == "channel_id")
        #expect(ingestError(#"{\#(base),"message_id":1,"recipient_type":"channel","channel_id":1}"#, .zulip, context())?.field == "topic")
        #expect(ingestError(#"{\#(base),"message_id":1,"recipient_type":"huddle"}"#, .zulip, context())?.field == "recipient_type")
        #expect(ingestError(#"{\#(base),"message_id":"x1","recipient_type":"direct","sender_id":2}"#, .zulip, context())
            == IngestError(format: .zulip, field: "message_id", reason: "expected an integer or a numeric string"))
        #expect(ingestError(#"{"user_id":10,"type":"test"}"#, .zulip, context())?.field == "realm_url")
    }
}
