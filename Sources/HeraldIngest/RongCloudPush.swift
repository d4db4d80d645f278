import HeraldEvents

/// One RongCloud push, read from any of the forms a device or an app receives into the
/// fields the mapping needs (``RongCloudAdapter``). The iOS forms are read here, the Android
/// forms (FCM data, vendor extras, the legacy Xiaomi content, `PushNotificationMessage`) in
/// `RongCloudPush+Android.swift`; each form says which of its keys names the conversation.
struct RongCloudPush {
    /// The form a push arrived in.
    enum Form: String {
        /// iOS APNs `userInfo`: `aps` beside `rc` and `appData`.
        case apns = "iOS APNs"
        /// The `userInfo` of IMKit's own local notification (`rc` with `mId`).
        case imkitLocal = "IMKit local notification"
        /// The Android FCM data map `{"message": "<JSON text>"}`.
        case fcm = "FCM data"
        /// A phone vendor's intent extras: `rc` (JSON text) beside `appData`, `content`, ….
        case vendor = "vendor extras"
        /// The legacy Xiaomi content of IMKit 2.x: `channelType`, `channelId`, `fromUserId`.
        case xiaomi = "Xiaomi content"
        /// The Android SDK's app-facing `PushNotificationMessage`.
        case pushNotificationMessage = "PushNotificationMessage"
    }

    var form: Form
    /// The objects fields are read from, `rc` first.
    var sources: [PayloadObject]
    var conversation: RongCloudConversation?
    /// The field path of the conversation type, for errors.
    var conversationField: String
    /// The conversation's target on the receiver's side (the group, the peer of a private
    /// conversation, …); `nil` when the payload names none.
    var target: String?
    /// The field path that should have named the target, for errors.
    var targetField: String
    var sender: String?
    var objectName: String?
    /// The message UId (`rc.id`, `pushId`).
    var uid: String?
    /// IMKit's local message id (`rc.mId`): a row of the device's database, not a UId.
    var localMessageId: String?
    var title: String?
    var body: String?
    var senderName: String?
    /// The conversation's title (`targetUserName`: a group's name).
    var conversationTitle: String?
    /// Unix seconds.
    var date: Int64?
    /// The UId of the message a recall removes (`rc-dlt-identifier`).
    var recalledUId: String?
    /// The call a call message names (`callId` in `appData`/`pushData` or `ext`/`extra`).
    var callId: String?
    var mentioned: Bool
    /// Why RongCloud's SDK drops this payload without showing anything, when it does.
    var ignored: String? = nil

    /// The chat: `<conversation>:<target>` (``RongCloudConversation/chat(_:target:)``).
    var chat: String? { conversation.flatMap { RongCloudConversation.chat($0, target: target) } }

    /// The first non-empty text under any of `keys`, in `sources` order.
    static func text(_ keys: [String], in sources: [PayloadObject]) throws(IngestError) -> String? {
        for source in sources {
            for key in keys {
                if let value = try source.text(key), !value.isEmpty { return value }
            }
        }
        return nil
    }

    /// The first flag under any of `keys` that is present.
    static func flag(_ keys: [String], in sources: [PayloadObject]) throws(IngestError) -> Bool? {
        for source in sources {
            for key in keys where source.has(key) { return try source.flag(key) }
        }
        return nil
    }

    /// Whether `sources` say the user was mentioned (`isMentioned` / `mentioned`), or the
    /// app's data does as a flag (the app's own data may use these names otherwise).
    static func mentioned(in sources: [PayloadObject], extras: [PayloadObject]) throws(IngestError) -> Bool {
        try flag(["isMentioned", "mentioned"], in: sources)
            ?? extras.contains { (try? flag(["isMentioned", "mentioned"], in: [$0])) == true }
    }

    /// A JSON object given as an object or as JSON text (`appData`, `pushData`, `ext`,
    /// `extra`); `nil` for text that is not a JSON object, which is the app's own business.
    static func jsonObject(_ key: String, in fields: PayloadObject?) -> PayloadObject? {
        guard let fields, let value = fields[key] else { return nil }
        if let members = value.object { return PayloadObject(members, path: fields.field(key), format: .rongcloud) }
        guard let text = value.string, let parsed = try? JSONParser.parse(Array(text.utf8)), let members = parsed.object else {
            return nil
        }
        return PayloadObject(members, path: fields.field(key), format: .rongcloud)
    }

    /// RongCloud's times are milliseconds; a value below 10¹¹ is taken as seconds already.
    static func seconds(_ time: Int64) -> Int64 { time >= 100_000_000_000 ? time / 1000 : time }

    /// Reads `root` in whichever form it has; `nil` when it is none of them. An `rc` with
    /// iOS's names (`cType`), beside `aps` or IMKit's `mId`, is an iOS form; anything else is
    /// read as Android's.
    static func read(_ root: PayloadObject) throws(IngestError) -> RongCloudPush? {
        let rc = try root.object("rc", asJSONText: true)
        if root.has("aps") || rc?.has("mId") == true || rc?.has("cType") == true {
            guard let rc else { throw root.error("rc", "missing") }
            return try iOS(rc: rc, beside: root, form: rc.has("mId") && !rc.has("id") ? .imkitLocal : .apns)
        }
        return try android(root)
    }

    /// An iOS form: `rc` {`cType`, `fId`, `tId`, `oName`, `id`, …} beside `aps` and `appData`.
    /// A private (or encrypted) conversation's target on the receiver's side is the sender
    /// (`fId`): iOS puts the receiver's own id in `tId` there.
    static func iOS(rc: PayloadObject, beside root: PayloadObject, form: Form) throws(IngestError) -> RongCloudPush {
        let sources = [rc, root]
        let extras = [jsonObject("appData", in: root), jsonObject("ext", in: rc)].compactMap { $0 }
        let alert = try alertText(root)
        let conversation = try RongCloudConversation.read(rc, "cType")
        let sender = try text(["fId"], in: sources)
        let oneToOne = conversation?.isOneToOne == true
        return RongCloudPush(
            form: form, sources: sources, conversation: conversation, conversationField: rc.field("cType"),
            target: try oneToOne ? sender : text(["tId"], in: sources), targetField: rc.field(oneToOne ? "fId" : "tId"),
            sender: sender,
            objectName: try orElse(text(["oName"], in: sources), root.object("aps")?.nonEmptyString("category")),
            uid: try orElse(text(["id", "pushId", "messageUId"], in: [rc]), text(["pushId", "messageUId"], in: [root])),
            localMessageId: try rc.text("mId"),
            title: try orElse(alert.title, text(["pushTitle", "title"], in: [root])),
            body: try orElse(alert.body, text(["pushContent", "content"], in: [root])),
            senderName: try text(["senderName", "fromUserName"], in: sources),
            conversationTitle: try text(["targetUserName", "targetName"], in: sources),
            date: try date(in: sources), recalledUId: try text(["rc-dlt-identifier"], in: sources + extras),
            callId: try text(["callId"], in: extras), mentioned: try mentioned(in: sources, extras: extras))
    }

    /// The send time in Unix seconds: `msgTime` › `sentTime` › `timeStamp` (the Android SDK's
    /// spelling, `PushUtils.transformToPushMessage`) › `timestamp` › `receivedTime`, in
    /// milliseconds (see ``seconds(_:)``); `nil` when none is present.
    static func date(in sources: [PayloadObject]) throws(IngestError) -> Int64? {
        for source in sources {
            for key in ["msgTime", "sentTime", "timeStamp", "timestamp", "receivedTime"] {
                guard let time = try source.text(key), !time.isEmpty else { continue }
                guard let value = JSONValue.parseInteger(time), value >= 0 else {
                    throw source.error(key, "expected a time in milliseconds, got \"\(time)\"")
                }
                return seconds(value)
            }
        }
        return nil
    }

    /// The title and body of an `aps.alert`: a string (the body) or `{title, body}`.
    static func alertText(_ root: PayloadObject) throws(IngestError) -> (title: String?, body: String?) {
        guard let aps = try root.object("aps"), let alert = aps["alert"] else { return (nil, nil) }
        switch alert {
        case .string(let body):
            return (nil, body.isEmpty ? nil : body)
        case .object(let members):
            let fields = PayloadObject(members, path: aps.field("alert"), format: .rongcloud)
            return (try fields.nonEmptyString("title"), try fields.nonEmptyString("body"))
        default:
            throw aps.error("alert", "expected a string or an object, got \(alert.typeName)")
        }
    }
}
