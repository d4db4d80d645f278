import HeraldEvents
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
}
