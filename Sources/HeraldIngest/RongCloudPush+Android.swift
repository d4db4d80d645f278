import HeraldEvents

/// The Android forms of a RongCloud push, read as RongCloud's Android push SDK reads them
/// (`io.rong.push.core.PushUtils`: `transformToPushMessage`, `transformRcPushData`; IMKit
/// 2.7.2's `MessageHandleService` for the legacy Xiaomi content). Sources and the table of
/// forms: `schema/rongcloud-push.md`.
///
/// In every Android form the conversation is `conversationType` + `targetId`, and `targetId`
/// is the conversation on the receiver's side (the group, discussion, customer-service,
/// system sender, ultra group, or the other person of a private conversation). `rc.tId` is
/// the receiver's own user id (`transformRcPushData` keeps it as `toId`): it never names a
/// chat. `pushFlag` only says the object came by push (`isFromPush`).
extension RongCloudPush {
    /// The conversation RongCloud's SDK gives an `rc` without `conversationType`
    /// (`transformRcPushData`: `optInt("conversationType", 9)`): the push service.
    static let androidDefaultConversation = RongCloudConversation.pushService

    /// The conversations whose legacy Xiaomi content names the target with `channelId`; every
    /// other one is the sender's (`fromUserId`): IMKit 2.7.2 `transformToPushMessage`.
    static let legacyChannelConversations: Set<RongCloudConversation> = [.discussion, .group, .chatroom]

    /// Reads an Android form: the FCM data map, vendor intent extras, the legacy Xiaomi
    /// content, or a `PushNotificationMessage`; `nil` when `root` is none of them.
    static func android(_ root: PayloadObject) throws(IngestError) -> RongCloudPush? {
        if let inner = try fcmMessage(root) {
            if let push = try androidContent(inner, form: .fcm) { return push }
            // `transformToPushMessage` fails on a message without `rc` and the SDK drops it.
            return RongCloudPush(ignored: "no rc: RongCloud's SDK drops the message (PushUtils.transformToPushMessage)", form: .fcm, source: inner)
        }
        if let push = try androidContent(root, form: .vendor) { return push }
        if root.has("pushId") || root.has("conversationType") || root.has("pushContent") {
            return try pushNotificationMessage(root)
        }
        return nil
    }

    /// The JSON object inside an FCM data map's `message` text (top level, `data`, or an FCM v1
    /// request's `message.data`): RongCloud's `RongFirebaseMessagingService` hands
    /// `data["message"]` to `transformToPushMessage`.
    static func fcmMessage(_ root: PayloadObject) throws(IngestError) -> PayloadObject? {
        let data = try root.fcmData() ?? root
        guard let text = data["message"]?.string else { return nil }
        guard let parsed = try? JSONParser.parse(Array(text.utf8)), let members = parsed.object else {
            throw data.error("message", "expected JSON text of an object")
        }
        return PayloadObject(members, path: data.field("message"), format: .rongcloud)
    }

    /// The content of an FCM message or a vendor's extras: `rc` (an object, or JSON text of
    /// one) beside `appData`, `title`, `content`, …, or the legacy Xiaomi content; `nil` when
    /// it has neither.
    static func androidContent(_ fields: PayloadObject, form: Form) throws(IngestError) -> RongCloudPush? {
        let rc = try fields.object("rc", asJSONText: true)
        if isLegacyXiaomi(fields, rc: rc) { return try legacyXiaomi(fields, rc: rc) }
        guard let rc else { return nil }
        return try rcContent(rc, beside: fields, form: form)
    }

    /// Whether `fields` is IMKit 2.x's Xiaomi content: `channelType`/`channelId` name the
    /// conversation, and its `rc` (if any) carries only `tId`, `id` and `ext`.
    static func isLegacyXiaomi(_ fields: PayloadObject, rc: PayloadObject?) -> Bool {
        guard fields.has("channelType") || fields.has("channelId") else { return false }
        return rc?.has("conversationType") != true && rc?.has("targetId") != true
    }

    /// `rc` {`conversationType`, `targetId`, `fromUserId`, `objectName`, `id`, `tId`, `ext`, …}
    /// beside `appData`, `title`, `content`, `fromUserName`, `timeStamp`
    /// (`transformToPushMessage` and `transformRcPushData`).
    static func rcContent(_ rc: PayloadObject, beside root: PayloadObject, form: Form) throws(IngestError) -> RongCloudPush {
        let sources = [rc, root]
        let extras = [jsonObject("appData", in: root), jsonObject("ext", in: rc)].compactMap { $0 }
        let conversation = try RongCloudConversation.read(rc, "conversationType") ?? androidDefaultConversation
        let sender = try text(["fromUserId"], in: [rc])
        return RongCloudPush(
            form: form, sources: sources, conversation: conversation, conversationField: rc.field("conversationType"),
            target: try orElse(text(["targetId"], in: [rc]), conversation.isOneToOne ? sender : nil),
            targetField: rc.field("targetId"), sender: sender, objectName: try text(["objectName"], in: [rc]),
            uid: try text(["id"], in: [rc]), localMessageId: nil,
            title: try text(["title"], in: [root]), body: try text(["content"], in: [root]),
            senderName: try text(["fromUserName"], in: sources),
            conversationTitle: try text(["targetUserName", "targetName"], in: sources),
            date: try date(in: sources), recalledUId: try text(["rc-dlt-identifier"], in: sources + extras),
            callId: try text(["callId"], in: extras), mentioned: try mentioned(in: sources, extras: extras))
    }

    /// IMKit 2.x's Xiaomi content (`MessageHandleService.transformToPushMessage` of IMKit
    /// 2.7.2): `channelType` (a number as a string) is the conversation; its target is
    /// `channelId` (named `channelName`) for a discussion, a group or a chat room, else the
    /// sender `fromUserId` (named `fromUserName`); `rc.id` is the push id, the message UId.
    static func legacyXiaomi(_ fields: PayloadObject, rc: PayloadObject?) throws(IngestError) -> RongCloudPush {
        let conversation = try RongCloudConversation.read(fields, "channelType")
        let byChannel = conversation.map(legacyChannelConversations.contains) ?? true
        let targetKey = byChannel ? "channelId" : "fromUserId"
        let extras = [jsonObject("appData", in: fields), jsonObject("ext", in: rc)].compactMap { $0 }
        return RongCloudPush(
            form: .xiaomi, sources: [rc, fields].compactMap { $0 }, conversation: conversation,
            conversationField: fields.field("channelType"), target: try text([targetKey], in: [fields]),
            targetField: fields.field(targetKey), sender: try text(["fromUserId"], in: [fields]),
            objectName: try text(["objectName"], in: [fields]), uid: try text(["id"], in: [rc].compactMap { $0 }),
            localMessageId: nil, title: try text(["title"], in: [fields]), body: try text(["content"], in: [fields]),
            senderName: try text(["fromUserName"], in: [fields]),
            conversationTitle: try text([byChannel ? "channelName" : "fromUserName"], in: [fields]),
            date: try date(in: [fields]), recalledUId: try text(["rc-dlt-identifier"], in: [fields] + extras),
            callId: try text(["callId"], in: extras), mentioned: try mentioned(in: [fields], extras: extras))
    }

    /// The app-facing `io.rong.push.notification.PushNotificationMessage`, as
    /// `rongcloud-react-native-imlib`'s `Convert.toJSON` lists it: `pushId`, `conversationType`
    /// (a number, or the enum's name), `targetId`, `senderId`, `senderName`, `targetUserName`,
    /// `objectName`, `pushTitle`, `pushContent`, `pushData`, `extra`, `pushFlag`, `pushType`.
    /// `pushFlag` and `pushType` say how it came (push, which vendor), not where it belongs.
    static func pushNotificationMessage(_ fields: PayloadObject) throws(IngestError) -> RongCloudPush {
        let extras = [jsonObject("pushData", in: fields), jsonObject("extra", in: fields)].compactMap { $0 }
        let conversation = try RongCloudConversation.read(fields, "conversationType") ?? androidDefaultConversation
        let sender = try text(["senderId"], in: [fields])
        return RongCloudPush(
            form: .pushNotificationMessage, sources: [fields], conversation: conversation,
            conversationField: fields.field("conversationType"),
            target: try orElse(text(["targetId"], in: [fields]), conversation.isOneToOne ? sender : nil),
            targetField: fields.field("targetId"), sender: sender, objectName: try text(["objectName"], in: [fields]),
            uid: try text(["pushId"], in: [fields]), localMessageId: nil,
            title: try text(["pushTitle"], in: [fields]), body: try text(["pushContent"], in: [fields]),
            senderName: try text(["senderName"], in: [fields]), conversationTitle: try text(["targetUserName"], in: [fields]),
            date: try date(in: [fields]), recalledUId: try text(["rc-dlt-identifier"], in: [fields] + extras),
            callId: try text(["callId"], in: extras), mentioned: try mentioned(in: [fields], extras: extras))
    }

    /// A payload RongCloud's SDK drops without a notification: read as a `note` saying why.
    init(ignored reason: String, form: Form, source: PayloadObject) {
        self.init(
            form: form, sources: [source], conversation: nil, conversationField: source.field("rc"), target: nil,
            targetField: source.field("rc"), sender: nil, objectName: nil, uid: nil, localMessageId: nil, title: nil,
            body: nil, senderName: nil, conversationTitle: nil, date: nil, recalledUId: nil, callId: nil, mentioned: false,
            ignored: reason)
    }
}
