import HeraldEvents
import HeraldProjection
import HeraldStore
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// RongCloud's Android forms (issue 43): the conversation is `conversationType` + `targetId`
/// in every form, `rc.tId` is the receiver, an absent type is the push service, `pushFlag`
/// names no chat, a recall deletes what it recalls. Each payload is ingested into a real
/// store and the chat, the notification's identity and the counts are read back.
/// Fixtures and their sources: `RongCloudFixtures.swift`; the rules: `schema/rongcloud-push.md`.
@Suite("RongCloud on Android")
struct RongCloudAndroidTests {
    typealias F = RongCloudFixtures

    /// A store in a temporary directory, fed decoded payloads.
    struct Fed {
        let directory = TemporaryDirectory()
        let store: Store

        init() throws { store = try Store(path: directory.child("s")) }

        /// Decodes `payload` (format detected, as `auto` does) and appends its events.
        @discardableResult
        func ingest(_ payload: String) throws -> [Event] {
            let decoded = try events(payload, nil, context(account: F.account))
            _ = try store.append(contentsOf: decoded.map { ($0, Source(format: "rongcloud")) })
            return decoded
        }

        var account: AccountState? { store.account(F.account) }

        /// The active notifications: (chat, object id, partial).
        var shown: [(chat: String, objectId: Int64, partial: Bool)] {
            (account?.groups ?? []).flatMap { group in group.notifications.map { (group.chat, $0.objectId, $0.partial) } }
        }

        /// The unread count of each chat that has one.
        var unread: [String: Int] {
            Dictionary(uniqueKeysWithValues: (account?.chats ?? []).filter { $0.unread > 0 }.map { ($0.chat, $0.unread) })
        }
    }

    @Test(arguments: RongCloudFixtures.conversationTypes)
    func everyConversationTypeLandsInTheChatItsTargetNames(_ item: RongCloudFixtures.Case) throws {
        let (chat, uid) = (item.chat, item.uid)
        let fed = try Fed()
        let events = try fed.ingest(item.payload)
        #expect(events.compactMap(Identity.init) == [Identity(account: F.account, chat: chat, objectClass: .msg, id: StableID.of(uid))])
        #expect(fed.shown.map(\.chat) == [chat] && fed.shown.map(\.objectId) == [StableID.of(uid)])
        #expect(fed.unread == [chat: 1] && fed.account?.unread.unread == 1)
        // No chat is ever named after the receiver (`rc.tId`).
        #expect(!(fed.account?.chats ?? []).contains { $0.chat.hasSuffix(":u-me") })
    }

    @Test func rcIsReadAsAnObjectOrAsJSONTextInsideTheFCMMessage() throws {
        let object = try events(F.fcmV1Group, .rongcloud, context(account: F.account))
        let text = try events(F.fcmGroupRcAsText, .rongcloud, context(account: F.account))
        #expect(object.compactMap(Identity.init) == text.compactMap(Identity.init))
        #expect(text.compactMap(Identity.init).map(\.chat) == ["group:g-42"])
    }

    @Test func anAbsentConversationTypeIsThePushServiceNotAnError() throws {
        let fed = try Fed()
        let events = try fed.ingest(F.androidPushService)
        guard case .notify(let notify)? = events.first?.payload else { Issue.record("no notify: \(events)"); return }
        #expect(notify.chat == "push_service" && notify.title == "Weekend sale" && notify.body == "30% off everything")
        // The same through a vendor's extras, naming a target: `push_service:<targetId>`.
        let named = F.vendor(#"{"targetId":"shop","id":"PS1","tId":"u-me"}"#, content: "sale")
        #expect(try fed.ingest(named).compactMap(Identity.init).map(\.chat) == ["push_service:shop"])
        #expect(fed.unread == ["push_service": 1, "push_service:shop": 1])
    }

    @Test func pushFlagTrueSaysNothingOfTheConversation() throws {
        let fed = try Fed()
        try fed.ingest(F.pushMessageGroup)
        #expect(fed.shown.map(\.chat) == ["group:g-42"] && fed.shown.map(\.objectId) == [StableID.of(F.groupUId)])
        // Only conversation type 9 is the push service, whatever pushFlag says.
        let push = F.pushService.replacingOccurrences(of: #""pushFlag":"true""#, with: #""pushFlag":"false""#)
        #expect(try fed.ingest(push).compactMap(Identity.init).map(\.chat) == ["push_service"])
    }

    @Test func aRecallOfAGroupMessageDeletesItInTheSameChat() throws {
        let fed = try Fed()
        try fed.ingest(F.fcmGroupRcAsText)
        #expect(fed.unread == ["group:g-42": 1] && fed.shown.count == 1)
        let recall = try fed.ingest(F.androidGroupRecall)
        #expect(recall == [Event(account: F.account, .delete(ids: [StableID.of(F.groupUId)], chat: "group:g-42"))])
        #expect(fed.shown.isEmpty && fed.unread.isEmpty && fed.account?.unread.unread == 0)
    }

    @Test(arguments: [RongCloudFixtures.fcmGroupRcAsText, RongCloudFixtures.huaweiGroup, RongCloudFixtures.legacyXiaomiGroup, RongCloudFixtures.pushMessageGroup])
    func aRecallClearsTheGroupMessageWhicheverFormCarriedEither(message: String) throws {
        let recalls = [
            F.androidGroupRecall,
            F.fcm(#"{"rc":\#(F.rc("3", target: "g-42", id: F.groupUId, objectName: "RC:RcNtf")),"content":"recalled"}"#),
            #"{"pushId":"C3MV-UN1E-0PJ4-8U2A","conversationType":3,"objectName":"RC:RcNtf","senderId":"u-ada","targetId":"g-42","pushFlag":"true","pushType":"OPPO"}"#,
        ]
        for recall in recalls {
            let fed = try Fed()
            try fed.ingest(message)
            try fed.ingest(recall)
            #expect(fed.shown.isEmpty && fed.account?.unread.unread == 0, "\(recall)")
        }
    }

    @Test func oneMessageThroughTwoVendorChannelsIsOneNotification() throws {
        let fed = try Fed()
        try fed.ingest(F.huaweiGroup)
        let again = try fed.ingest(F.xiaomiGroup)
        #expect(again.compactMap(Identity.init) == [Identity(account: F.account, chat: "group:g-42", objectClass: .msg, id: StableID.of(F.groupUId))])
        #expect(fed.shown.count == 1 && fed.unread == ["group:g-42": 1] && fed.account?.unread.unread == 1)
        // The FCM copy and the app's PushNotificationMessage of it change nothing either.
        try fed.ingest(F.fcmV1Group)
        try fed.ingest(F.pushMessageGroup)
        #expect(fed.shown.count == 1 && fed.account?.unread.unread == 1)
    }

    @Test func theConnectionsCopyOfAGroupMessageMeetsItsPushInOneChat() throws {
        let fed = try Fed()
        try fed.ingest(F.fcmGroupRcAsText)
        #expect(fed.shown.map(\.partial) == [true])
        try fed.ingest(F.connectionGroup)
        #expect(fed.shown.count == 1 && fed.shown.first?.chat == "group:g-42" && fed.shown.first?.objectId == StableID.of(F.groupUId))
        #expect(fed.shown.map(\.partial) == [false], "the push's notification is upgraded in place")
        #expect(fed.unread == ["group:g-42": 1] && fed.account?.chats.count == 1)
        // A push arriving after the connection's copy is a duplicate.
        try fed.ingest(F.legacyXiaomiGroup)
        #expect(fed.shown.count == 1 && fed.account?.unread.unread == 1)
    }

    @Test func legacyXiaomiContentNamesTheChatByChannelOrBySender() throws {
        // channelId names a discussion, group or chat room; any other conversation is the sender's.
        let chatroom = #"{"channelType":"4","channelId":"room-1","fromUserId":"u-ada","objectName":"RC:TxtMsg","content":"hi","rc":{"tId":"u-me","id":"CR1"}}"#
        let customerService = #"{"channelType":"5","channelId":"u-me","fromUserId":"KEFU1","objectName":"RC:TxtMsg","content":"hi","rc":{"tId":"u-me","id":"CS1"}}"#
        let system = #"{"channelType":"6","channelId":"u-me","fromUserId":"sys-notice","objectName":"RC:TxtMsg","content":"hi","rc":{"tId":"u-me","id":"SY1"}}"#
        for (payload, chat) in [(chatroom, "chatroom:room-1"), (customerService, "customer_service:KEFU1"), (system, "system:sys-notice")] {
            #expect(try events(payload, nil, context(account: F.account)).compactMap(Identity.init).map(\.chat) == [chat])
        }
        guard case .notify(let group)? = try events(F.legacyXiaomiGroup, nil, context(account: F.account)).first?.payload else {
            Issue.record("no notify")
            return
        }
        // The group's name is its channelName; the time is `timeStamp` in milliseconds.
        #expect(group.title == "Team" && group.sender == "Ada" && group.date == 1_754_390_000)
        // The push id is rc.id: without it, nothing to notify.
        let withoutRc = #"{"channelType":"3","channelId":"g-42","fromUserId":"u-ada","objectName":"RC:TxtMsg","id":"X"}"#
        #expect(try events(withoutRc, .rongcloud, context(account: F.account)).map(\.type) == [.note])
    }

    @Test func anFCMMessageWithoutRcIsANote() throws {
        let line = F.fcm(#"{"title":"Ada","content":"hi","appData":""}"#)
        #expect(try events(line, .rongcloud, context(account: F.account)).map(\.type) == [.note])
    }
}
