import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("APNs and FCM")
struct AppPushTests {
    @Test func apnsThreadMessage() throws {
        let result = try Ingest.decode(try Samples.bytes("apns/thread-message.json"), format: nil, context: context(account: "a"))
        #expect(result.format == .apns)
        #expect(result.events == [
            Event(account: "a", .notify(Event.Notify(
                chat: "user:alice", kind: .message, id: 881, date: receivedAt, partial: true,
                title: "Alice", body: "Are we still on for lunch?", thread: "message-Alice"))),
            Event(account: "a", .note(source: "apns", reason: "badge 3")),
        ])
    }

    /// `reminder_id` is the app's own key, not a message id: the id is the payload's digest.
    @Test func apnsUnthreadedReminder() throws {
        let bytes = try Samples.bytes("apns/unthreaded-reminder.json")
        #expect(try Ingest.decode(bytes, format: .apns, context: context(account: "a")).events == [
            Event(account: "a", .notify(Event.Notify(
                chat: "app", kind: .message, id: StableID.of(bytes: bytes), date: receivedAt, partial: true,
                title: "Appointment reminder", body: "Dentist at 10:30")))
        ])
    }

    @Test func apnsThreadIdIsTheChatWhenNoneIsNamed() throws {
        let line = #"{"aps":{"alert":"plain text","thread-id":"t-1","interruption-level":"passive"},"message_id":"5"}"#
        #expect(try events(line, nil, context(account: "a")) == [
            Event(account: "a", .notify(Event.Notify(chat: "t-1", kind: .message, id: 5, date: receivedAt, silent: true, partial: true, body: "plain text", thread: "t-1")))
        ])
    }

    @Test func apnsWithoutIdGetsAStableDigestId() throws {
        let line = #"{"aps":{"alert":{"title":"Hi"}}}"#
        let first = try events(line, nil, context(account: "a"))
        let second = try events(line, nil, context(account: "a"))
        #expect(first == second)
        let id = try #require(first.first.flatMap(Identity.init)?.id)
        #expect(id > 0)
        #expect(id == StableID.of(bytes: Array(line.utf8)))
    }

    @Test func apnsBadgeOnlyAndBackground() throws {
        #expect(try events(#"{"aps":{"badge":0}}"#, nil, context(account: "a")) == [Event(account: "a", .note(source: "apns", reason: "badge 0"))])
        #expect(try events(#"{"aps":{"content-available":1}}"#, nil, context(account: "a")).count == 1)
    }

    @Test func apnsErrorsNameTheField() throws {
        #expect(ingestError(#"{"aps":{"alert":3}}"#, .apns, context(account: "a"))?.field == "aps.alert")
        #expect(ingestError(#"{"aps":{"alert":"x"},"message_id":true}"#, .apns, context(account: "a"))?.field == "message_id")
        #expect(ingestError(#"{"aps":{"alert":"x"},"kind":"bogus"}"#, .apns, context(account: "a"))?.field == "kind")
        #expect(ingestError(#"{"aps":{"alert":"x"}}"#, .apns, context())?.field == "account")
        #expect(ingestError(#"{"aps":{"alert":"x"},"account":"b"}"#, .apns, context(account: "a"))?.field == "account")
        #expect(ingestError(#"{"alert":"x"}"#, .apns, context(account: "a"))?.field == "aps")
    }

    @Test func fcmDataMessage() throws {
        let result = try Ingest.decode(try Samples.bytes("fcm/data-message.json"), format: nil, context: context(account: "tg:14124122"))
        #expect(result.format == .fcm)
        #expect(result.events == [
            Event(account: "tg:14124122", .notify(Event.Notify(
                chat: "chat:241233", kind: .message, id: 124, date: 1_754_385_400, partial: true,
                title: "John Doe @ My magical group", body: "see you at 5", thread: "chat-241233")))
        ])
    }

    @Test func fcmNotificationFallbackAndErrors() throws {
        let line = #"{"message":{"token":"t","notification":{"title":"T","body":"B"}}}"#
        guard case .notify(let n) = try events(line, nil, context(account: "a")).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(n.chat == "app")
        #expect(n.title == "T")
        #expect(n.body == "B")
        #expect(ingestError(#"{"message":{"token":"t"}}"#, .fcm, context(account: "a"))?.field == "message.data")
        #expect(ingestError(#"{"message":{"data":{"message_id":"0"}}}"#, .fcm, context(account: "a"))
            == IngestError(format: .fcm, field: "message.data.message_id", reason: "must be > 0, got 0"))
        #expect(ingestError(#"{"message":{"data":{"date":"soon"}}}"#, .fcm, context(account: "a"))?.field == "message.data.date")
        #expect(ingestError(#"{"message":{"data":{"account":"b"}}}"#, .fcm, context(account: "a"))?.field == "message.data.account")
    }
}
