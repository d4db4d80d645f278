import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Which keys of an APNs or FCM payload give its object id.
@Suite("APNs and FCM object ids")
struct AppPushIDTests {
    /// The object id of the first event of `line`.
    func id(_ line: String) throws -> Int64 {
        try #require(try events(line, nil, context(account: "a")).first.flatMap(Identity.init)?.id)
    }

    @Test(arguments: ["chat_id", "sender_id", "user_id", "thread_id", "reminder_id"])
    func otherIdKeysAreNotMessageIds(key: String) throws {
        let first = #"{"aps":{"alert":"x"},"\#(key)":77}"#
        let second = #"{"aps":{"alert":"y"},"\#(key)":77}"#
        #expect(try id(first) == StableID.of(bytes: Array(first.utf8)))
        #expect(try id(second) == StableID.of(bytes: Array(second.utf8)))
        #expect(try id(first) != id(second))
        let fcm = #"{"message":{"data":{"\#(key)":"77","title":"t"}}}"#
        #expect(try id(fcm) == StableID.of(bytes: Array(fcm.utf8)))
    }

    @Test func messageIdKeysComeFirstInTheirOrder() throws {
        #expect(try id(#"{"aps":{"alert":"x"},"id":3,"msg_id":2,"message_id":1,"chat_id":9}"#) == 1)
        #expect(try id(#"{"aps":{"alert":"x"},"id":3,"msg_id":2,"chat_id":9}"#) == 2)
        #expect(try id(#"{"aps":{"alert":"x"},"id":3,"sender_id":9}"#) == 3)
        #expect(try id(#"{"message":{"data":{"msg_id":"5","user_id":"9"}}}"#) == 5)
    }

    @Test func twoMessagesOfOneChatAreTwoObjects() throws {
        let lines = [#"{"aps":{"alert":"x"},"chat_id":77}"#, #"{"aps":{"alert":"y"},"chat_id":77}"#]
        let identities = try lines.map { line in try #require(try events(line, .apns, context(account: "a")).first.flatMap(Identity.init)) }
        #expect(Set(identities).count == 2)
    }

    @Test func nonNumericMessageIdsAreStableIdsOfTheirText() throws {
        let uuid = "550e8400-e29b-41d4-a716-446655440000"
        #expect(try id(#"{"aps":{"alert":"x"},"id":"\#(uuid)"}"#) == StableID.of(uuid))
        #expect(try id(#"{"aps":{"alert":"x"},"message_id":"0:1754385400%abc123"}"#) == StableID.of("0:1754385400%abc123"))
        let fcm = #"{"message":{"data":{"id":"\#(uuid)","title":"t"}}}"#
        #expect(try id(fcm) == StableID.of(uuid))
        // Two deliveries of one message id, with other bytes, are one object.
        let redelivered = #"{"message":{"data":{"id":"\#(uuid)","title":"t","body":"again"}}}"#
        #expect(try id(redelivered) == id(fcm))
    }

    /// Issue 22 §6: an FCM `data.message_id` names a message only as a decimal integer; FCM's
    /// own message ids (`0:1754385400%abc`) are rejected, naming the field.
    @Test func fcmMessageIdsMustBeDecimal() throws {
        #expect(ingestError(#"{"message":{"data":{"message_id":"0:1754385400%abc","title":"t"}}}"#, .fcm, context(account: "a"))
            == IngestError(format: .fcm, field: "message.data.message_id", reason: #"expected a decimal integer, got "0:1754385400%abc""#))
        #expect(ingestError(#"{"to":"tok","data":{"message_id":"12a"}}"#, .fcm, context(account: "a"))?.field == "data.message_id")
        #expect(try id(#"{"message":{"data":{"message_id":"124","title":"t"}}}"#) == 124)
    }

    @Test func theOrderHoldsForStringIds() throws {
        #expect(try id(#"{"aps":{"alert":"x"},"message_id":"m-1","id":7}"#) == StableID.of("m-1"))
        #expect(try id(#"{"aps":{"alert":"x"},"message_id":"","id":"u-2"}"#) == StableID.of("u-2"))
        #expect(try id(#"{"aps":{"alert":"x"},"msg_id":"12","id":"u-2"}"#) == 12)
    }

    @Test func badIdsStillNameTheirField() throws {
        #expect(ingestError(#"{"aps":{"alert":"x"},"id":"-4"}"#, .apns, context(account: "a"))
            == IngestError(format: .apns, field: "id", reason: "must be > 0, got -4"))
        #expect(ingestError(#"{"aps":{"alert":"x"},"id":[1]}"#, .apns, context(account: "a"))
            == IngestError(format: .apns, field: "id", reason: "expected an integer or a string, got an array"))
        #expect(ingestError(#"{"message":{"data":{"msg_id":1.5}}}"#, .fcm, context(account: "a"))?.field == "message.data.msg_id")
    }
}
