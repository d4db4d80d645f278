/// RongCloud payloads in every form a device or app receives, written from what RongCloud's
/// public docs and code say of their keys (facts, not code):
/// - iOS APNs `userInfo`: docs.rongcloud.io's iOS remote-push page ("`rc` dictionary":
///   `cType` PR/DS/GRP/CS/SYS/MC/MP/UG…, `fId`, `oName`, `tId`, `id` = the message UId;
///   `appData` = the message's pushData; `aps.category` = the object name), IMKit's
///   `RCKitUtility.m` (the codes of each conversation type, the local notification's `rc`
///   with `mId`), SealTalk's notification service extension (reads `rc.id`, and
///   `rc-dlt-identifier` on an `RC:RcCmd` recall push to remove the recalled message's
///   notification);
/// - Android, re-read for issue 43 (see `schema/rongcloud-push.md`, "Sources"): the push SDK's
///   `RongFirebaseMessagingService` (FCM `data["message"]` is JSON text, handed to
///   `PushUtils.transformToPushMessage`, which takes `rc` as an object or as JSON text beside
///   `appData`, `title`, `content`, `fromUserName`, `timeStamp`), `PushUtils.transformRcPushData`
///   (`rc`: `conversationType`, default 9; `targetId`; `fromUserId`; `objectName`; `id` = the
///   push id; `tId` = the receiver's own id, kept as `toId`; `ext`), the vendor transforms
///   (`transformHuaWei`, `transformVivo`: the intent's `rc` JSON text and `appData`;
///   `transformXiaomi`: the MiPush content, shaped as the FCM message), IMKit 2.7.2's
///   `MessageHandleService.transformToPushMessage` (legacy Xiaomi content: `channelType`,
///   `channelId`/`channelName` for discussion, group, chat room, else `fromUserId`/
///   `fromUserName`; `rc.id` = push id), `RongNotificationInterface` (an `RC:RcNtf` removes
///   the cached notification whose push id it carries), and `rongcloud-react-native-imlib`'s
///   `Convert.toJSON(PushNotificationMessage, PushType)` (the keys of that form);
/// - server SDKs' `PushExt` / `/push.json` (push-service notices, conversation type 9).
/// Ids, names and times are made up; UIds have RongCloud's `XXXX-XXXX-XXXX-XXXX` shape. The
/// receiver is `u-me` (the `tId` of every Android `rc`), Ada (`u-ada`) sends.
enum RongCloudFixtures {
    static let account = "rc:8luwapkvucoil|u-me"
    /// A private message from Ada and a group message in g-42.
    static let privateUId = "BPJK-E8N4-OAS4-O3RR"
    static let groupUId = "C3MV-UN1E-0PJ4-8U2A"

    // MARK: iOS

    static let iosPrivate =
        #"{"aps":{"alert":{"title":"Ada","body":"lunch at noon?"},"badge":3,"sound":"default","category":"RC:TxtMsg","mutable-content":1,"thread-id":"u-ada"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:TxtMsg","tId":"u-me","id":"BPJK-E8N4-OAS4-O3RR","msgTime":1754390000123},"appData":""}"#
    static let iosGroup =
        #"{"aps":{"alert":"Ada: ship it","badge":4,"sound":"default","category":"RC:TxtMsg"},"rc":{"cType":"GRP","fId":"u-ada","oName":"RC:TxtMsg","tId":"g-42","id":"C3MV-UN1E-0PJ4-8U2A"},"appData":"{\"orderId\":7}"}"#
    static let iosRecall =
        #"{"aps":{"alert":"Ada recalled a message","sound":"default","category":"RC:RcCmd"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:RcCmd","tId":"u-me","id":"D9QK-2M4T-0PJ5-1X7C","rc-dlt-identifier":"BPJK-E8N4-OAS4-O3RR"}}"#
    static let iosRecallInAppData =
        #"{"aps":{"alert":"Ada recalled a message","category":"RC:RcCmd"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:RcCmd","tId":"u-me","id":"D9QK-2M4T-0PJ5-1X7C"},"appData":"{\"rc-dlt-identifier\":\"BPJK-E8N4-OAS4-O3RR\"}"}"#
    static let iosCallInvite =
        #"{"aps":{"alert":"Ada invited you to a video call","sound":"RongCallKit.bundle/voip/voip_call.caf","category":"RC:VCInvite"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:VCInvite","tId":"u-me","id":"F1AA-7KQ2-0PJ6-2Z9D"},"appData":"{\"callId\":\"call-9f2\",\"mediaType\":2}"}"#
    static let iosWithoutUId =
        #"{"aps":{"alert":"Ada: hi"},"rc":{"cType":"PR","fId":"u-ada","oName":"RC:TxtMsg","tId":"u-me"}}"#
    static let imkitLocal =
        #"{"rc":{"cType":"PR","fId":"u-ada","oName":"RC:TxtMsg","tId":"u-ada","mId":1187}}"#

    // MARK: Android

    /// `text` as a JSON string literal (for JSON carried as text inside JSON).
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// An FCM data map as RongCloud's FCM service receives it: `data.message` is JSON text.
    static func fcm(_ content: String) -> String { #"{"data":{"message":\#(quoted(content))}}"# }

    /// An Android `rc` object (`transformRcPushData`'s keys): `targetId` is the conversation
    /// on the receiver's side, `tId` the receiver; `type` nil leaves `conversationType` out.
    static func rc(_ type: String?, target: String?, from: String = "u-ada", id: String, objectName: String = "RC:TxtMsg") -> String {
        let conversation = type.map { #""conversationType":"\#($0)","# } ?? ""
        let targetId = target.map { #""targetId":"\#($0)","# } ?? ""
        return #"{\#(conversation)\#(targetId)"fromUserId":"\#(from)","tId":"u-me","objectName":"\#(objectName)","id":"\#(id)"}"#
    }

    /// A phone vendor's intent extras (`transformHuaWei`, `transformVivo`): `rc` as JSON text
    /// beside `appData`.
    static func vendor(_ rc: String, content: String) -> String {
        #"{"rc":\#(quoted(rc)),"appData":"","content":\#(quoted(content)),"fromUserName":"Ada"}"#
    }

    static let fcmPrivate = fcm(
        #"{"rc":\#(rc("1", target: "u-ada", id: privateUId)),"appData":"","title":"Ada","content":"lunch at noon?","fromUserName":"Ada","timeStamp":1754390000123}"#)
    static let fcmV1Group =
        #"{"message":{"token":"fcm-token","data":{"message":"{\"rc\":{\"conversationType\":\"3\",\"targetId\":\"g-42\",\"fromUserId\":\"u-ada\",\"tId\":\"u-me\",\"objectName\":\"RC:TxtMsg\",\"id\":\"C3MV-UN1E-0PJ4-8U2A\"},\"content\":\"Ada: ship it\",\"fromUserName\":\"Ada\"}"}}}"#
    /// The group message with `rc` as JSON text inside the FCM `message` text.
    static let fcmGroupRcAsText = fcm(
        #"{"rc":\#(quoted(rc("3", target: "g-42", id: groupUId))),"appData":"","title":"Team","content":"Ada: ship it","fromUserName":"Ada","timeStamp":1754390000123}"#)
    static let vendorMention =
        #"{"rc":"{\"conversationType\":\"3\",\"targetId\":\"g-42\",\"fromUserId\":\"u-ada\",\"tId\":\"u-me\",\"objectName\":\"RC:TxtMsg\",\"id\":\"K5WN-0Q3E-0PJ7-4B2F\",\"isMentioned\":\"1\"}","appData":"","content":"@me ship it","fromUserName":"Ada","timestamp":"1754390100456"}"#
    /// The group message through Huawei (intent extras) and through Xiaomi (the MiPush
    /// content `transformXiaomi` reads: `rc` as an object): one message, one notification.
    static let huaweiGroup = vendor(rc("3", target: "g-42", id: groupUId), content: "Ada: ship it")
    static let xiaomiGroup =
        #"{"rc":\#(rc("3", target: "g-42", id: groupUId)),"appData":"","title":"Team","content":"Ada: ship it","fromUserName":"Ada","timeStamp":1754390000123}"#

    /// One payload of each conversation type, with the chat and UId it must give.
    static let discussionUId = "D7SC-4K2M-0PJC-1A2B"
    static let customerServiceUId = "CS5K-7F1Q-0PJD-2B3C"
    static let systemUId = "SY6T-2W8E-0PJE-3C4D"
    static let ultraGroupUId = "UG0A-9R3T-0PJF-4D5E"
    static let pushServiceUId = "PS9Z-6Y4U-0PJG-5E6F"
    static let androidDiscussion = vendor(rc("2", target: "d-7", id: discussionUId), content: "Ada: agenda?")
    static let androidCustomerService = fcm(
        #"{"rc":\#(rc("5", target: "KEFU146001495753714", from: "KEFU146001495753714", id: customerServiceUId)),"title":"Support","content":"How can we help?","fromUserName":"Support"}"#)
    static let androidSystem = vendor(rc("6", target: "sys-notice", from: "sys-notice", id: systemUId), content: "Your order shipped")
    static let androidUltraGroup = fcm(
        #"{"rc":\#(rc("10", target: "ug-9", id: ultraGroupUId)),"title":"Guild","content":"Ada: raid at 9","fromUserName":"Ada"}"#)
    /// A `/push.json` notice: no conversation type (the SDK reads 9), no target.
    static let androidPushService = fcm(
        #"{"rc":{"id":"PS9Z-6Y4U-0PJG-5E6F","tId":"u-me","sourceType":"1"},"appData":"{\"url\":\"https://shop.example/sale\"}","title":"Weekend sale","content":"30% off everything"}"#)
    /// An Android payload and the chat and UId it must give.
    struct Case: Sendable, CustomStringConvertible {
        var form: String
        var payload: String
        var chat: String
        var uid: String
        var description: String { "\(form) → \(chat)" }
    }

    static let conversationTypes: [Case] = [
        Case(form: "vendor extras", payload: androidDiscussion, chat: "discussion:d-7", uid: discussionUId),
        Case(form: "FCM, rc as text", payload: fcmGroupRcAsText, chat: "group:g-42", uid: groupUId),
        Case(form: "FCM", payload: androidCustomerService, chat: "customer_service:KEFU146001495753714", uid: customerServiceUId),
        Case(form: "vendor extras", payload: androidSystem, chat: "system:sys-notice", uid: systemUId),
        Case(form: "FCM", payload: androidUltraGroup, chat: "ultragroup:ug-9", uid: ultraGroupUId),
        Case(form: "FCM, no conversationType", payload: androidPushService, chat: "push_service", uid: pushServiceUId),
        Case(form: "FCM", payload: fcmPrivate, chat: "private:u-ada", uid: privateUId),
        Case(form: "Xiaomi MiPush content", payload: xiaomiGroup, chat: "group:g-42", uid: groupUId),
        Case(form: "legacy Xiaomi", payload: legacyXiaomiGroup, chat: "group:g-42", uid: groupUId),
        Case(form: "legacy Xiaomi", payload: legacyXiaomiDiscussion, chat: "discussion:d-7", uid: discussionUId),
        Case(form: "legacy Xiaomi", payload: xiaomiLegacy, chat: "private:u-ada", uid: "E2RB-9T1L-0PJ8-6C3G"),
        Case(form: "PushNotificationMessage", payload: pushMessageGroup, chat: "group:g-42", uid: groupUId),
    ]

    /// The recall of the group message: `RC:RcNtf` carrying the recalled message's push id.
    static let androidGroupRecall = vendor(
        rc("3", target: "g-42", id: groupUId, objectName: "RC:RcNtf"), content: "Ada recalled a message")

    /// IMKit 2.x's Xiaomi content: `channelType`/`channelId` name a group or discussion, the
    /// sender names any other conversation (`channelId` is not read there); `rc.id` is the UId.
    static let xiaomiLegacy =
        #"{"channelType":"1","channelId":"u-me","fromUserId":"u-ada","fromUserName":"Ada","objectName":"RC:ImgMsg","content":"[Image]","timeStamp":1754390200000,"rc":{"tId":"u-me","id":"E2RB-9T1L-0PJ8-6C3G"}}"#
    static let legacyXiaomiGroup =
        #"{"channelType":"3","channelId":"g-42","channelName":"Team","fromUserId":"u-ada","fromUserName":"Ada","objectName":"RC:TxtMsg","title":"","content":"Ada: ship it","appData":"","timeStamp":1754390000123,"rc":{"tId":"u-me","id":"C3MV-UN1E-0PJ4-8U2A"}}"#
    static let legacyXiaomiDiscussion =
        #"{"channelType":"2","channelId":"d-7","channelName":"Offsite","fromUserId":"u-ada","fromUserName":"Ada","objectName":"RC:TxtMsg","content":"Ada: agenda?","timeStamp":1754390000123,"rc":"{\"tId\":\"u-me\",\"id\":\"D7SC-4K2M-0PJC-1A2B\"}"}"#

    /// `PushNotificationMessage` (`Convert.toJSON`'s keys). `pushFlag` "true": it came by push.
    static let pushMessageGroup =
        #"{"pushId":"C3MV-UN1E-0PJ4-8U2A","conversationType":3,"objectName":"RC:TxtMsg","senderId":"u-ada","senderName":"Ada","senderPortraitUrl":"","targetId":"g-42","targetUserName":"Team","pushTitle":"","pushContent":"Ada: ship it","pushData":"","extra":"","pushFlag":"true","pushType":"HONOR"}"#
    static let pushMessageRecall =
        #"{"pushId":"BPJK-E8N4-OAS4-O3RR","conversationType":"PRIVATE","objectName":"RC:RcNtf","senderId":"u-ada","senderName":"Ada","targetId":"u-ada","pushContent":"Ada recalled a message","pushFlag":"true","pushType":"HW"}"#
    static let pushMessageHangup =
        #"{"pushId":"G7PZ-1V8M-0PJ9-3D5H","conversationType":1,"objectName":"RC:VCHangup","senderId":"u-ada","senderName":"Ada","targetId":"u-ada","pushContent":"Call ended","pushData":"{\"callId\":\"call-9f2\"}","pushFlag":"true","pushType":"MI"}"#
    static let pushService =
        #"{"pushId":"H3XC-5N2K-0PJA-7E1J","conversationType":9,"objectName":"","senderId":"","targetId":"","pushTitle":"Weekend sale","pushContent":"30% off everything","pushData":"{\"url\":\"https://shop.example/sale\"}","pushFlag":"true","pushType":"GOOGLE_FCM"}"#

    // MARK: The IM connection

    static let connectionPrivate =
        #"{"conversationType":1,"targetId":"u-ada","senderUserId":"u-ada","messageUId":"BPJK-E8N4-OAS4-O3RR","objectName":"RC:TxtMsg","sentTime":1754390000123,"content":"lunch at noon?","senderName":"Ada"}"#
    static let connectionOffline =
        #"{"conversationType":3,"targetId":"g-42","senderUserId":"u-bo","messageUId":"M8TR-3J6W-0PJB-9F4K","objectName":"RC:TxtMsg","sentTime":1754380000000,"content":"morning all","senderName":"Bo","conversationTitle":"Team","offline":true}"#
    static let connectionRecall =
        #"{"conversationType":1,"targetId":"u-ada","senderUserId":"u-ada","messageUId":"BPJK-E8N4-OAS4-O3RR","objectName":"RC:RcNtf","sentTime":1754390060000}"#

    /// The IM connection's copy of the group message (its push: `fcmGroupRcAsText`).
    static let connectionGroup =
        #"{"conversationType":3,"targetId":"g-42","senderUserId":"u-ada","messageUId":"C3MV-UN1E-0PJ4-8U2A","objectName":"RC:TxtMsg","sentTime":1754390000123,"content":"Ada: ship it","senderName":"Ada","conversationTitle":"Team"}"#

    /// Every push form above and the connection's messages, for detection and fuzzing.
    static let all = [
        iosPrivate, iosGroup, iosRecall, iosRecallInAppData, iosCallInvite, iosWithoutUId, imkitLocal,
        fcmPrivate, fcmV1Group, vendorMention, xiaomiLegacy, pushMessageGroup, pushMessageRecall, pushMessageHangup,
        pushService, connectionPrivate, connectionOffline, connectionRecall,
        fcmGroupRcAsText, huaweiGroup, xiaomiGroup, androidDiscussion, androidCustomerService, androidSystem,
        androidUltraGroup, androidPushService, androidGroupRecall, legacyXiaomiGroup, legacyXiaomiDiscussion, connectionGroup,
    ]
}
