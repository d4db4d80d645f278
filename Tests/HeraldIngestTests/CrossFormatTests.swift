import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// SEMANTICS §4 rule 1 relies on one object having one identity however it arrives.
@Suite("Identity across formats")
struct CrossFormatTests {
    @Test func telegramPushAndFCMDataMessageNameTheSameObject() throws {
        let account = "tg:14124122"
        let telegram = #"{"data":{"loc_key":"CHAT_MESSAGE_TEXT","loc_args":["John Doe","My magical group","see you at 5"],"user_id":14124122,"custom":{"chat_id":241233,"msg_id":"124"}}}"#
        let fromTelegram = try events(telegram, nil, context(account: account))
        let fromFCM = try Ingest.decode(try Samples.bytes("fcm/data-message.json"), format: nil, context: context(account: account)).events
        let expected = Identity(account: account, chat: "chat:241233", objectClass: .msg, id: 124)
        #expect(fromTelegram.compactMap(Identity.init) == [expected])
        #expect(fromFCM.compactMap(Identity.init) == [expected])
    }

    @Test func pushAndFullHeraldEventNameTheSameObject() throws {
        let push = try events(#"{"loc_key":"MESSAGE_TEXT","loc_args":["A","hi"],"user_id":"7","custom":{"from_id":"5","msg_id":"9"}}"#, .telegram, context())
        let full = Event(account: "tg:7", .notify(Event.Notify(chat: "user:5", kind: .message, id: 9, date: 1, title: "A", body: "hi")))
        let fromConnection = try events(full.jsonString, nil, context())
        #expect(push.compactMap(Identity.init) == fromConnection.compactMap(Identity.init))
        guard case .notify(let partial) = push[0].payload else { return }
        #expect(partial.partial)
    }

    @Test func encryptedAndPlainTelegramPushesNameTheSameObject() throws {
        let key = try Samples.telegramKey()
        let encrypted = try events(try Samples.telegramPushes()[0].payload, nil, context(account: "tg:1", telegramKeys: [key]))
        let plain = try events(try Samples.telegramPushes()[0].plaintext, nil, context(account: "tg:1"))
        #expect(encrypted == plain)
    }

    @Test func redeliveryIsIdentical() throws {
        for (name, format) in Samples.all {
            let account: String? = format == .telegram || format == .zulip ? nil : "acct"
            let bytes = try Samples.bytes(name)
            let first = try Ingest.decode(bytes, format: nil, context: context(account: account))
            let again = try Ingest.decode(bytes, format: nil, context: context(account: account))
            #expect(first == again, "\(name)")
        }
    }

    @Test func matrixEventIdOnlyAndFullNameTheSameObject() throws {
        let partial = try Ingest.decode(try Samples.bytes("matrix/sygnal-event-id-only.json"), format: nil, context: context(account: "m")).events
        let full = try Ingest.decode(try Samples.bytes("matrix/sygnal-notification.json"), format: nil, context: context(account: "m")).events
        #expect(partial.compactMap(Identity.init) == full.compactMap(Identity.init))
    }
}
