import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Telegram")
struct TelegramTests {
    @Test func docSampleWithTrailingComma() throws {
        let bytes = try Samples.bytes("telegram/doc-sample.json")
        let result = try Ingest.decode(bytes, format: .telegram, context: context())
        #expect(result.format == .telegram)
        #expect(!result.encrypted)
        #expect(result.events == [
            Event(account: "tg:14124122", .notify(Event.Notify(
                chat: "chat:241233", kind: .message, id: 123, date: receivedAt, partial: true,
                title: "John Doe @ My magical group", body: "contact: Contact Exchange", sender: "John Doe")))
        ])
    }

    @Test func docSampleIsDetected() throws {
        let result = try Ingest.decode(try Samples.bytes("telegram/doc-sample.json"), format: nil, context: context())
        #expect(result.format == .telegram)
    }

    @Test func userIdMustMatchTheContextAccount() throws {
        let bytes = try Samples.bytes("telegram/doc-sample.json")
        #expect(throws: IngestError(format: .telegram, field: "data.user_id", reason: "payload is for account \"tg:14124122\", not \"tg:1\"")) {
            try Ingest.decode(bytes, format: .telegram, context: context(account: "tg:1"))
        }
        #expect((try? Ingest.decode(bytes, format: .telegram, context: context(account: "tg:14124122"))) != nil)
    }

    @Test func accountIsRequiredWithoutUserId() throws {
        let line = #"{"loc_key":"MESSAGE_TEXT","loc_args":["A","hi"],"custom":{"from_id":"5","msg_id":"7"}}"#
        #expect(ingestError(line, .telegram, context())?.field == "user_id")
        #expect(try events(line, .telegram, context(account: "tg:9")).first?.account == "tg:9")
    }

    @Test func conversationPrecedence() throws {
        func chat(_ custom: String) throws -> String? {
            try events(#"{"loc_key":"MESSAGE_TEXT","custom":{\#(custom),"msg_id":1}}"#, .telegram, context(account: "a")).first?.chat
        }
        #expect(try chat(#""channel_id":"1","chat_id":"2","from_id":"3","encryption_id":"4""#) == "channel:1")
        #expect(try chat(#""chat_id":"2","from_id":"3","encryption_id":"4""#) == "chat:2")
        #expect(try chat(#""from_id":"3","encryption_id":"4""#) == "user:3")
        #expect(try chat(#""encryption_id":4"#) == "secret:4")
    }

    @Test func kinds() throws {
        func notify(_ line: String) throws -> Event.Notify? {
            guard case .notify(let n) = try events(line, .telegram, context(account: "a")).first?.payload else { return nil }
            return n
        }
        let mention = try notify(#"{"loc_key":"CHAT_MESSAGE_TEXT","loc_args":["A","G","hi @me"],"custom":{"chat_id":"5","msg_id":"9","mention":"1","date":"1700000000"}}"#)
        #expect(mention?.kind == .mention)
        #expect(mention?.date == 1_700_000_000)
        #expect(mention?.title == "A @ G")
        #expect(mention?.body == "hi @me")
        #expect(try notify(#"{"loc_key":"PINNED_TEXT","loc_args":["A","G","x"],"custom":{"chat_id":"5","msg_id":"9"}}"#)?.kind == .pinned)
        #expect(try notify(#"{"loc_key":"REACT_TEXT","loc_args":["A","x","👍"],"custom":{"from_id":"5","msg_id":"9"}}"#)?.kind == .reaction)
        #expect(try notify(#"{"loc_key":"CHAT_REACT_TEXT","loc_args":["A","G","x","👍"],"custom":{"chat_id":"5","msg_id":"9"}}"#)?.kind == .reaction)
        let call = try notify(#"{"loc_key":"PHONE_CALL_REQUEST","loc_args":["A"],"custom":{"from_id":"5","call_id":"77","call_ah":"1"}}"#)
        #expect(call?.kind == .call)
        #expect(call?.id == 77)
        #expect(call?.chat == "user:5")
        let secret = try notify(#"{"loc_key":"ENCRYPTION_REQUEST","loc_args":["A"],"custom":{"encryption_id":"31"}}"#)
        #expect(secret?.kind == .secretChat)
        #expect(secret?.chat == "secret:31")
        #expect(secret?.id == 31)
        #expect(secret?.partial == true)
    }

    @Test func editDeleteReadReactionsRevoke() throws {
        let a = context(account: "a")
        #expect(try events(#"{"loc_key":"MESSAGE_TEXT","loc_args":["A","new"],"custom":{"from_id":"5","msg_id":"9","edit_date":"1700000001"}}"#, .telegram, a)
            == [Event(account: "a", .edit(Event.Edit(chat: "user:5", kind: .message, id: 9, title: "A", body: "new", partial: true)))])
        #expect(try events(#"{"loc_key":"MESSAGE_DELETED","custom":{"channel_id":"5","messages":"10,11, 12"}}"#, .telegram, a)
            == [Event(account: "a", .delete(ids: [10, 11, 12], chat: "channel:5"))])
        #expect(try events(#"{"loc_key":"MESSAGE_DELETED","custom":{"messages":"10"}}"#, .telegram, a)
            == [Event(account: "a", .delete(ids: [10], chat: nil))])
        #expect(try events(#"{"loc_key":"READ_HISTORY","custom":{"chat_id":5,"max_id":"40"}}"#, .telegram, a)
            == [Event(account: "a", .read(chat: "chat:5", maxId: 40))])
        #expect(try events(#"{"loc_key":"READ_REACTION","custom":{"from_id":5,"messages":"3,4"}}"#, .telegram, a)
            == [Event(account: "a", .readReactions(chat: "user:5", ids: [3, 4]))])
        let revoke = try events(#"{"loc_key":"SESSION_REVOKE","loc_args":[]}"#, .telegram, a)
        guard case .note(let source, let reason) = revoke.first?.payload else {
            Issue.record("plain SESSION_REVOKE must be a note, got \(revoke)")
            return
        }
        #expect(source == "telegram")
        #expect(reason?.contains("encrypted") == true)
    }

    @Test(arguments: ["DC_UPDATE", "MESSAGE_MUTED", "GEO_LIVE_PENDING", "SOMETHING_NEW"])
    func stateFreeKeysAreNotes(locKey: String) throws {
        let result = try events(#"{"loc_key":"\#(locKey)","custom":{"dc":"2","addr":"1.2.3.4:443"}}"#, .telegram, context(account: "a"))
        guard result.count == 1, case .note(let source, let reason) = result[0].payload else {
            Issue.record("expected one note, got \(result)")
            return
        }
        #expect(source == "telegram")
        #expect(reason?.hasPrefix(locKey) == true)
    }

    @Test func errorsNameTheField() throws {
        let a = context(account: "a")
        #expect(ingestError(#"{"loc_key":"MESSAGE_TEXT","custom":{"from_id":"5","msg_id":"x"}}"#, .telegram, a)
            == IngestError(format: .telegram, field: "custom.msg_id", reason: "expected an integer or a numeric string"))
        #expect(ingestError(#"{"data":{"loc_key":"MESSAGE_TEXT","custom":{"from_id":"5","msg_id":"-3"}}}"#, .telegram, a)?.field == "data.custom.msg_id")
        #expect(ingestError(#"{"loc_key":"MESSAGE_TEXT","custom":{"msg_id":"3"}}"#, .telegram, a)?.field == "custom")
        #expect(ingestError(#"{"custom":{"msg_id":"3"}}"#, .telegram, a)?.field == "loc_key")
        #expect(ingestError(#"{"loc_key":"READ_HISTORY","custom":{"chat_id":"3"}}"#, .telegram, a)?.field == "custom.max_id")
        #expect(ingestError(#"{"loc_key":"MESSAGE_DELETED","custom":{"messages":"1,,2"}}"#, .telegram, a)?.field == "custom.messages")
        #expect(ingestError(#"{"loc_key":"MESSAGE_TEXT","loc_args":[1,{}]}"#, .telegram, a)?.field == "loc_args[1]")
        #expect(ingestError(#"{"loc_key":"MESSAGE_TEXT""#, .telegram, a)?.reason.hasPrefix("invalid JSON") == true)
    }

    @Test func customAsJSONText() throws {
        let line = #"{"loc_key":"MESSAGE_TEXT","loc_args":["A","hi"],"custom":"{\"from_id\":\"5\",\"msg_id\":\"6\"}","user_id":"8"}"#
        #expect(try events(line, .telegram, context()).first.flatMap(Identity.init)
            == Identity(account: "tg:8", chat: "user:5", objectClass: .msg, id: 6))
    }

    @Test func textRendering() throws {
        #expect(TelegramText.render(locKey: "MESSAGE_TEXT", args: ["Arseny Smirnov", "abcdefg"])
            == .init(title: "Arseny Smirnov", body: "abcdefg", sender: "Arseny Smirnov"))
        #expect(TelegramText.render(locKey: "CHANNEL_MESSAGE_PHOTO", args: ["News"])
            == .init(title: "News", body: "photo", sender: nil))
        #expect(TelegramText.render(locKey: "PINNED_GEO", args: ["A"]) == .init(title: "A", body: "pinned geo", sender: "A"))
        #expect(TelegramText.render(locKey: "MESSAGE_TEXT", args: []) == .init(title: nil, body: nil, sender: nil))
    }
}
