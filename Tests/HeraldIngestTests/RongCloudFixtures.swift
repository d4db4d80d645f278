/// RongCloud payloads in every form a device or app receives, written from what RongCloud's
/// public docs and code say of their keys (facts, not code; recalled from these sources, which
/// could not be re-read while this was written, so a key found to differ is a fixture to fix):
/// - iOS APNs `userInfo`: docs.rongcloud.io's iOS remote-push page ("`rc` dictionary":
///   `cType` PR/DS/GRP/CS/SYS/MC/MP/UG…, `fId`, `oName`, `tId`, `id` = the message UId;
///   `appData` = the message's pushData; `aps.category` = the object name), IMKit's
///   `RCKitUtility.m` (the codes of each conversation type, the local notification's `rc`
///   with `mId`), SealTalk's notification service extension (reads `rc.id`, and
///   `rc-dlt-identifier` on an `RC:RcCmd` recall push to remove the recalled message's
///   notification);
/// - Android: the push SDK's FCM service (`data["message"]` is JSON text), its vendor
///   receivers and `PushUtils` transforms (`rc` as JSON text beside `appData`, `content`,
///   `fromUserName`, `timestamp`; legacy Xiaomi content with `channelType`, `channelId`,
///   `fromUserId`), and the app-facing `io.rong.push.notification.PushNotificationMessage`
///   (its getters name the keys used here); `RC:RcNtf` recall notices carry the recalled
///   message's UId;
/// - server SDKs' `PushExt` / `/push.json` (push-service notices, conversation type 9,
///   `pushFlag` true).
/// Ids, names and times are made up; UIds have RongCloud's `XXXX-XXXX-XXXX-XXXX` shape.
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

    static let fcmPrivate =
        #"{"message":"{\"rc\":{\"conversationType\":\"1\",\"targetId\":\"u-ada\",\"fromUserId\":\"u-ada\",\"objectName\":\"RC:TxtMsg\",\"id\":\"BPJK-E8N4-OAS4-O3RR\"},\"appData\":\"\",\"title\":\"Ada\",\"content\":\"lunch at noon?\",\"fromUserName\":\"Ada\",\"timestamp\":1754390000123}"}"#
    static let fcmV1Group =
        #"{"message":{"token":"fcm-token","data":{"message":"{\"rc\":{\"conversationType\":\"3\",\"targetId\":\"g-42\",\"fromUserId\":\"u-ada\",\"objectName\":\"RC:TxtMsg\",\"id\":\"C3MV-UN1E-0PJ4-8U2A\"},\"content\":\"Ada: ship it\",\"fromUserName\":\"Ada\"}"}}}"#
    static let vendorMention =
        #"{"rc":"{\"conversationType\":\"3\",\"targetId\":\"g-42\",\"fromUserId\":\"u-ada\",\"objectName\":\"RC:TxtMsg\",\"id\":\"K5WN-0Q3E-0PJ7-4B2F\",\"isMentioned\":\"1\"}","appData":"","content":"@me ship it","fromUserName":"Ada","timestamp":"1754390100456"}"#
    static let xiaomiLegacy =
        #"{"channelType":"1","channelId":"u-ada","fromUserId":"u-ada","objectName":"RC:ImgMsg","id":"E2RB-9T1L-0PJ8-6C3G","content":"[Image]","fromUserName":"Ada","timestamp":1754390200000}"#
    static let pushMessageGroup =
        #"{"pushId":"C3MV-UN1E-0PJ4-8U2A","conversationType":3,"objectName":"RC:TxtMsg","senderId":"u-ada","senderName":"Ada","targetId":"g-42","targetUserName":"Team","pushTitle":"","pushContent":"Ada: ship it","pushData":"","extra":"","pushFlag":"false","pushType":"GOOGLE_FCM"}"#
    static let pushMessageRecall =
        #"{"pushId":"BPJK-E8N4-OAS4-O3RR","conversationType":"PRIVATE","objectName":"RC:RcNtf","senderId":"u-ada","senderName":"Ada","targetId":"u-ada","pushContent":"Ada recalled a message","pushFlag":"false","pushType":"HW"}"#
    static let pushMessageHangup =
        #"{"pushId":"G7PZ-1V8M-0PJ9-3D5H","conversationType":1,"objectName":"RC:VCHangup","senderId":"u-ada","senderName":"Ada","targetId":"u-ada","pushContent":"Call ended","pushData":"{\"callId\":\"call-9f2\"}","pushFlag":"false","pushType":"MI"}"#
    static let pushService =
        #"{"pushId":"H3XC-5N2K-0PJA-7E1J","conversationType":9,"objectName":"","senderId":"","targetId":"","pushTitle":"Weekend sale","pushContent":"30% off everything","pushData":"{\"url\":\"https://shop.example/sale\"}","pushFlag":"true","pushType":"GOOGLE_FCM"}"#

    // MARK: The IM connection

    static let connectionPrivate =
        #"{"conversationType":1,"targetId":"u-ada","senderUserId":"u-ada","messageUId":"BPJK-E8N4-OAS4-O3RR","objectName":"RC:TxtMsg","sentTime":1754390000123,"content":"lunch at noon?","senderName":"Ada"}"#
    static let connectionOffline =
        #"{"conversationType":3,"targetId":"g-42","senderUserId":"u-bo","messageUId":"M8TR-3J6W-0PJB-9F4K","objectName":"RC:TxtMsg","sentTime":1754380000000,"content":"morning all","senderName":"Bo","conversationTitle":"Team","offline":true}"#
    static let connectionRecall =
        #"{"conversationType":1,"targetId":"u-ada","senderUserId":"u-ada","messageUId":"BPJK-E8N4-OAS4-O3RR","objectName":"RC:RcNtf","sentTime":1754390060000}"#

    /// Every push form above and the connection's messages, for detection and fuzzing.
    static let all = [
        iosPrivate, iosGroup, iosRecall, iosRecallInAppData, iosCallInvite, iosWithoutUId, imkitLocal,
        fcmPrivate, fcmV1Group, vendorMention, xiaomiLegacy, pushMessageGroup, pushMessageRecall, pushMessageHangup,
        pushService, connectionPrivate, connectionOffline, connectionRecall,
    ]
}
