import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// RongCloud pushes in every form, and the IM connection's messages meeting them
/// (fixtures and their sources: `RongCloudFixtures.swift`; mapping: `schema/rongcloud-push.md`).
@Suite("RongCloud")
struct RongCloudTests {
    typealias F = RongCloudFixtures
    let rc = context(account: RongCloudFixtures.account)

    func decode(_ line: String, _ format: PayloadFormat? = .rongcloud) throws -> [Event] {
        try events(line, format, rc)
    }

    func notify(_ line: String) throws -> Event.Notify {
        guard case .notify(let notify)? = try decode(line).first?.payload else {
            throw IngestError(format: .rongcloud, field: "", reason: "expected a notify")
        }
        return notify
    }

    /// The one event a push of message `uid` should become: a partial `notify` of the account.
    func pushed(
        _ chat: String, _ kind: NotificationKind = .message, uid: String, date: Int64 = receivedAt,
        title: String? = nil, body: String?, sender: String? = nil
    ) -> [Event] {
        let fields = Event.Notify(
            chat: chat, kind: kind, id: StableID.of(uid), date: date, partial: true, title: title, body: body, sender: sender)
        return [Event(account: F.account, .notify(fields))]
    }

    @Test func iOSPrivateMessage() throws {
        #expect(
            try decode(F.iosPrivate)
                == pushed("private:u-ada", uid: F.privateUId, date: 1_754_390_000, title: "Ada", body: "lunch at noon?"))
    }

    @Test func aPrivateChatIsTheSendersWhateverTheTargetSays() throws {
        // iOS names the receiver in tId; Android the sender: one chat.
        #expect(try notify(F.iosPrivate).chat == "private:u-ada")
        #expect(try notify(F.fcmPrivate).chat == "private:u-ada")
        #expect(try notify(F.xiaomiLegacy).chat == "private:u-ada")
    }

    @Test func iOSGroupMessageWithAStringAlert() throws {
        #expect(try decode(F.iosGroup) == pushed("group:g-42", uid: F.groupUId, body: "Ada: ship it"))
    }

    @Test(arguments: [
        (RongCloudFixtures.iosPrivate, RongCloudFixtures.fcmPrivate),
        (RongCloudFixtures.iosGroup, RongCloudFixtures.fcmV1Group),
        (RongCloudFixtures.iosGroup, RongCloudFixtures.pushMessageGroup),
        (RongCloudFixtures.iosPrivate, RongCloudFixtures.connectionPrivate),
    ])
    func oneMessageFromAnyChannelIsOneObject(first: String, second: String) throws {
        let a = try #require(try decode(first).first.flatMap(Identity.init))
        let b = try #require(try decode(second).first.flatMap(Identity.init))
        #expect(a == b)
    }

    @Test func androidForms() throws {
        #expect(
            try decode(F.fcmPrivate)
                == pushed("private:u-ada", uid: F.privateUId, date: 1_754_390_000, title: "Ada", body: "lunch at noon?", sender: "Ada"))
        #expect(
            try decode(F.vendorMention)
                == pushed(
                    "group:g-42", .mention, uid: "K5WN-0Q3E-0PJ7-4B2F", date: 1_754_390_100, title: "Ada", body: "@me ship it",
                    sender: "Ada"))
        #expect(
            try decode(F.xiaomiLegacy)
                == pushed("private:u-ada", uid: "E2RB-9T1L-0PJ8-6C3G", date: 1_754_390_200, title: "Ada", body: "[Image]", sender: "Ada"))
        // PushNotificationMessage: an empty pushTitle gives way to the group's name.
        #expect(try decode(F.pushMessageGroup) == pushed("group:g-42", uid: F.groupUId, title: "Team", body: "Ada: ship it", sender: "Ada"))
    }

    @Test(arguments: [RongCloudFixtures.iosRecall, RongCloudFixtures.iosRecallInAppData, RongCloudFixtures.pushMessageRecall])
    func aRecallDeletesTheRecalledMessageAndNotifiesNothing(line: String) throws {
        #expect(try decode(line) == [Event(account: F.account, .delete(ids: [StableID.of(F.privateUId)], chat: "private:u-ada"))])
    }

    @Test func aRecallCommandWithoutTheRecalledIdIsANote() throws {
        let line =
            #"{"aps":{"alert":"recalled","category":"RC:RcCmd"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:RcCmd","tId":"u-me","id":"D9QK-2M4T-0PJ5-1X7C"}}"#
        #expect(try decode(line).map(\.type) == [.note])
    }

    @Test func callsRingAndEnd() throws {
        let invite = try notify(F.iosCallInvite)
        #expect(invite.kind == .call)
        #expect(invite.id == StableID.of("call-9f2"))
        #expect(invite.chat == "private:u-ada")
        #expect(try decode(F.pushMessageHangup) == [Event(account: F.account, .endCall(chat: "private:u-ada", id: invite.id))])
        let unnamed =
            #"{"pushId":"G7PZ-1V8M-0PJ9-3D5H","conversationType":1,"objectName":"RC:VCHangup","senderId":"u-ada","targetId":"u-ada","pushData":""}"#
        #expect(try decode(unnamed).map(\.type) == [.note])
        let modify =
            #"{"rc":"{\"conversationType\":\"3\",\"targetId\":\"g-42\",\"fromUserId\":\"u-ada\",\"objectName\":\"RC:VCModifyMem\",\"id\":\"P2LK-0A1B-0PJC-5G6H\"}","appData":"{\"callId\":\"call-77\"}","content":"Ada added you to a call"}"#
        #expect(try notify(modify).kind == .call)
        #expect(try notify(modify).id == StableID.of("call-77"))
    }

    @Test func aPushServiceNoticeHasItsOwnChat() throws {
        #expect(
            try decode(F.pushService)
                == pushed("push_service", uid: "H3XC-5N2K-0PJA-7E1J", title: "Weekend sale", body: "30% off everything"))
    }

    @Test(arguments: [RongCloudFixtures.iosWithoutUId, RongCloudFixtures.imkitLocal])
    func withoutAUIdAPushIsANoteNeverAGuess(line: String) throws {
        let result = try decode(line)
        #expect(result.map(\.type) == [.note])
    }

    @Test func readReceiptsNeverNotify() throws {
        let line = #"{"pushId":"R1","conversationType":1,"objectName":"RC:ReadNtf","senderId":"u-ada","targetId":"u-ada"}"#
        #expect(try decode(line).map(\.type) == [.note])
    }

    @Test(arguments: RongCloudFixtures.all)
    func everyFormIsDetected(line: String) throws {
        #expect(Ingest.detect(Array(line.utf8)) == .rongcloud)
        #expect(try decode(line, nil) == (try decode(line)))
    }

    @Test func otherFormsAreNotTakenForRongCloud() {
        #expect(Ingest.detect(Array(#"{"aps":{"alert":"hi"},"chat":"c"}"#.utf8)) == .apns)
        #expect(Ingest.detect(Array(#"{"aps":{"alert":"hi"},"from_id":"5","msg_id":"9"}"#.utf8)) == .telegram)
        #expect(Ingest.detect(Array(#"{"message":{"data":{"chat":"c"},"token":"t"}}"#.utf8)) == .fcm)
        #expect(Ingest.detect(Array(#"{"message":"not json","loc_key":"MESSAGE_ANNOUNCEMENT"}"#.utf8)) == .telegram)
    }

    @Test func aMentionFlagInTheAppsDataCountsOnlyWhenItIsAFlag() throws {
        let flagged =
            #"{"aps":{"alert":"Ada: @me"},"rc":{"cType":"GRP","fId":"u-ada","oName":"RC:TxtMsg","tId":"g-42","id":"Q1"},"appData":"{\"mentioned\":true}"}"#
        #expect(try notify(flagged).kind == .mention)
        let other =
            #"{"aps":{"alert":"Ada: hi"},"rc":{"cType":"GRP","fId":"u-ada","oName":"RC:TxtMsg","tId":"g-42","id":"Q2"},"appData":"{\"mentioned\":\"u-bo\"}"}"#
        #expect(try notify(other).kind == .message)
    }

    @Test func errorsNameTheFieldAsEachFormSpellsIt() {
        #expect(ingestError(#"{"channelType":"3","fromUserId":"u-ada","rc":{"id":"U"}}"#, .rongcloud, rc)?.field == "channelId")
        #expect(ingestError(#"{"channelType":"5","channelId":"u-me","rc":{"id":"U"}}"#, .rongcloud, rc)?.field == "fromUserId")
        #expect(ingestError(#"{"channelId":"g-42","fromUserId":"u-ada","rc":{"id":"U"}}"#, .rongcloud, rc)?.field == "channelType")
        #expect(ingestError(#"{"pushId":"U","conversationType":3,"senderId":"u-ada"}"#, .rongcloud, rc)?.field == "targetId")
        #expect(ingestError(#"{"pushId":"U","conversationType":1}"#, .rongcloud, rc)?.field == "targetId")
        #expect(ingestError(#"{"rc":{"conversationType":3,"fromUserId":"a","id":"U"}}"#, .rongcloud, rc)?.field == "rc.targetId")
        // `tId` is the receiver's own id on Android: it never stands in for the target.
        #expect(ingestError(#"{"rc":{"conversationType":3,"fromUserId":"a","tId":"u-me","id":"U"}}"#, .rongcloud, rc)?.field == "rc.targetId")
        #expect(
            ingestError(RongCloudFixtures.fcm(#"{"rc":{"conversationType":"10","tId":"u-me","id":"U"}}"#), .rongcloud, rc)?.field
                == "data.message.rc.targetId")
    }

    @Test func errorsNameTheField() {
        #expect(ingestError(#"{"aps":{},"rc":{"cType":"PR","fId":"a","id":"U","msgTime":"soon"}}"#, .rongcloud, rc)?.field == "rc.msgTime")
        #expect(
            ingestError(#"{"rc":"{\"conversationType\":1,\"fromUserId\":\"a\",\"id\":\"U\"}","timestamp":"-5"}"#, .rongcloud, rc)?.field
                == "timestamp")
        #expect(ingestError(F.iosPrivate, .rongcloud, context())?.field == "account")
        #expect(ingestError(#"{"aps":{},"rc":{"cType":"XX","fId":"a","tId":"b","id":"U"}}"#, .rongcloud, rc)?.field == "rc.cType")
        #expect(ingestError(#"{"aps":{},"rc":{"cType":"PR","tId":"u-me","id":"U"}}"#, .rongcloud, rc)?.field == "rc.fId")
        #expect(ingestError(#"{"aps":{},"rc":{"cType":"GRP","fId":"a","id":"U"}}"#, .rongcloud, rc)?.field == "rc.tId")
        #expect(ingestError(#"{"aps":{}}"#, .rongcloud, rc)?.field == "rc")
        #expect(ingestError(#"{"message":"{oops"}"#, .rongcloud, rc)?.field == "message")
        #expect(
            ingestError(#"{"conversationType":99,"targetId":"t","messageUId":"U","objectName":"RC:TxtMsg","sentTime":1}"#, .rongcloud, rc)?
                .field
                == "conversationType")
    }

    @Test func theAccountForm() {
        #expect(RongCloudAccount.name(appKey: "8luwapkvucoil", userId: "u-me") == F.account)
        #expect(RongCloudAccount.problem(F.account) == nil)
        for bad in [nil, "u-me", "rc:|u-me", "rc:8luwapkvucoil", "rc:8luwapkvucoil|", "tg:1|2"] {
            #expect(RongCloudAccount.problem(bad) != nil, "\(bad ?? "nil")")
        }
    }

    // MARK: The IM connection

    @Test func aConnectionMessageIsTheFullNotifyOfThePushsObject() throws {
        let push = try notify(F.iosPrivate)
        let full = try notify(F.connectionPrivate)
        #expect(!full.partial && push.partial)
        #expect(full.chat == push.chat && full.id == push.id && full.kind == push.kind)
        #expect(full.date == 1_754_390_000 && full.body == "lunch at noon?" && full.sender == "Ada" && full.title == "Ada")
        #expect(!full.unreadOnly)
    }

    @Test func anOfflineMessageCountsWithoutNotifying() throws {
        let offline = try notify(F.connectionOffline)
        #expect(offline.unreadOnly && !offline.partial)
        #expect(offline.chat == "group:g-42" && offline.title == "Team" && offline.date == 1_754_380_000)
    }

    @Test func aRecallOverTheConnectionIsThePushsDelete() throws {
        #expect(try decode(F.connectionRecall) == (try decode(F.iosRecall)))
    }

    @Test func theLibraryCallAndTheJSONLineAgree() throws {
        let message = try JSONDecoder().decode(RongCloudMessage.self, from: Data(F.connectionOffline.utf8))
        #expect(
            message
                == RongCloudMessage(
                    conversationType: 3, targetId: "g-42", senderUserId: "u-bo", messageUId: "M8TR-3J6W-0PJB-9F4K", objectName: "RC:TxtMsg",
                    sentTime: 1_754_380_000_000, content: "morning all", senderName: "Bo", conversationTitle: "Team", offline: true))
        #expect(try message.events(account: F.account) == (try decode(F.connectionOffline)))
        let encoded = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(RongCloudMessage.self, from: encoded) == message)
    }

    @Test func anotherDevicesReadSyncReadsTheConversation() throws {
        let sync =
            #"{"conversationType":3,"targetId":"g-42","senderUserId":"u-me","messageUId":"S1","objectName":"RC:SRSMsg","sentTime":1754390300000}"#
        #expect(try decode(sync) == [Event(account: F.account, .readAll(chat: "group:g-42"))])
        let receipt =
            #"{"conversationType":1,"targetId":"u-ada","senderUserId":"u-ada","messageUId":"S2","objectName":"RC:ReadNtf","sentTime":1754390300000}"#
        #expect(try decode(receipt).map(\.type) == [.note])
    }

    @Test func clearingAConversationsUnreadStateReadsItAll() throws {
        #expect(
            try RongCloudMessage.conversationRead(account: F.account, conversationType: 3, targetId: "g-42")
                == Event(account: F.account, .readAll(chat: "group:g-42")))
        #expect(throws: IngestError.self) {
            try RongCloudMessage.conversationRead(account: F.account, conversationType: 0, targetId: "g-42")
        }
    }
}
