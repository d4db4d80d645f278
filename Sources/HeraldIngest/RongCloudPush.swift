import HeraldEvents

/// One RongCloud push, read from any of the forms a device or an app receives into the
/// fields the mapping needs (``RongCloudAdapter``). Each field is looked up under every key
/// RongCloud spells it with, first in the `rc` object (where there is one), then beside it.
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
        /// The legacy Xiaomi content: `channelType`, `channelId`, `fromUserId`.
        case xiaomi = "Xiaomi content"
        /// The Android SDK's app-facing `PushNotificationMessage`.
        case pushNotificationMessage = "PushNotificationMessage"

        /// The names this form gives the conversation type, the sender and the target.
        var keys: (conversation: String, sender: String, target: String) {
            switch self {
            case .apns, .imkitLocal: ("cType", "fId", "tId")
            case .xiaomi: ("channelType", "fromUserId", "channelId")
            case .pushNotificationMessage: ("conversationType", "senderId", "targetId")
            case .fcm, .vendor: ("conversationType", "fromUserId", "targetId")
            }
        }
    }

    var form: Form
    /// The objects fields are read from, `rc` first.
    var sources: [PayloadObject]
    var conversation: RongCloudConversation?
    var target: String?
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
    /// A notice of the push service (`pushFlag` true, `/push.json`).
    var pushService: Bool

    /// The field path of `key` in the first source (for errors).
    func field(_ key: String) -> String { sources.first?.field(key) ?? key }

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

    /// A JSON object given as an object or as JSON text (`appData`, `pushData`, `ext`,
    /// `extra`); `nil` for text that is not a JSON object, which is the app's own business.
    static func jsonObject(_ key: String, in fields: PayloadObject) -> PayloadObject? {
        guard let value = fields[key] else { return nil }
        if let members = value.object { return PayloadObject(members, path: fields.field(key), format: .rongcloud) }
        guard let text = value.string, let parsed = try? JSONParser.parse(Array(text.utf8)), let members = parsed.object else {
            return nil
        }
        return PayloadObject(members, path: fields.field(key), format: .rongcloud)
    }

    /// RongCloud's times are milliseconds; a value below 10¹¹ is taken as seconds already.
    static func seconds(_ time: Int64) -> Int64 { time >= 100_000_000_000 ? time / 1000 : time }

    /// The keys of the message UId: `rc.id` (iOS, and `rc` on Android), `pushId`
    /// (`PushNotificationMessage`), `messageUId` (the SDK's `Message`).
    static let uidKeys = ["id", "pushId", "messageUId"]

    /// Reads `root` in whichever form it has; `nil` when it is none of them.
    static func read(_ root: PayloadObject) throws(IngestError) -> RongCloudPush? {
        let rc = try root.object("rc", asJSONText: true)
        if root.has("aps") || rc?.has("mId") == true {
            guard let rc else { throw root.error("rc", "missing") }
            return try read(rc: rc, beside: root, form: rc.has("mId") && !rc.has("id") ? .imkitLocal : .apns)
        }
        if let inner = try fcmMessage(root) { return try read(inner, form: .fcm) }
        return try read(root, form: nil)
    }

    /// The JSON object inside an FCM data map's `message` text (top level, `data`, or an FCM v1
    /// request's `message.data`).
    static func fcmMessage(_ root: PayloadObject) throws(IngestError) -> PayloadObject? {
        let data = try root.fcmData() ?? root
        guard let text = data["message"]?.string else { return nil }
        guard let parsed = try? JSONParser.parse(Array(text.utf8)), let members = parsed.object else {
            throw data.error("message", "expected JSON text of an object")
        }
        return PayloadObject(members, path: data.field("message"), format: .rongcloud)
    }

    /// An Android form: `rc` beside the push's fields (FCM, vendor), the legacy Xiaomi
    /// content, or a `PushNotificationMessage`; `form` is set for FCM, else decided here.
    static func read(_ fields: PayloadObject, form: Form?) throws(IngestError) -> RongCloudPush? {
        if let rc = try fields.object("rc", asJSONText: true) {
            return try read(rc: rc, beside: fields, form: form ?? .vendor)
        }
        let resolved: Form
        if let form {
            resolved = form
        } else if fields.has("channelType") || fields.has("channelId") {
            resolved = .xiaomi
        } else if fields.has("pushId") || fields.has("conversationType") || fields.has("pushContent") {
            resolved = .pushNotificationMessage
        } else {
            return nil
        }
        return try read(rc: nil, beside: fields, form: resolved)
    }

    /// Reads the fields of `rc` (when the form has one) and of the object beside it.
    static func read(rc: PayloadObject?, beside root: PayloadObject, form: Form) throws(IngestError) -> RongCloudPush {
        let sources = [rc, root].compactMap { $0 }
        let appData = jsonObject("appData", in: root) ?? jsonObject("pushData", in: root)
        let extras = [appData, rc.flatMap { jsonObject("ext", in: $0) }, jsonObject("extra", in: root)].compactMap { $0 }
        let alert = try alertText(root)
        var conversation: RongCloudConversation? = nil
        for source in sources {
            for key in ["cType", "conversationType", "channelType"] where source.has(key) {
                conversation = try RongCloudConversation.read(source, key)
                break
            }
            if conversation != nil { break }
        }
        let aps = try root.object("aps")
        // `id` is the UId inside `rc`; beside an `rc` only the Android names count.
        let uid: String?
        if let rc {
            uid = try orElse(text(uidKeys, in: [rc]), text(Array(uidKeys.dropFirst()), in: [root]))
        } else {
            uid = try text(uidKeys, in: [root])
        }
        return RongCloudPush(
            form: form, sources: sources, conversation: conversation,
            target: try text(["tId", "targetId", "channelId"], in: sources),
            sender: try text(["fId", "fromUserId", "senderId"], in: sources),
            objectName: try orElse(text(["oName", "objectName"], in: sources), aps?.nonEmptyString("category")),
            uid: uid,
            localMessageId: try rc?.text("mId"),
            title: try orElse(alert.title, text(["pushTitle", "title"], in: [root])),
            body: try orElse(alert.body, text(["pushContent", "content"], in: [root])),
            senderName: try text(["senderName", "fromUserName"], in: sources),
            conversationTitle: try text(["targetUserName", "targetName"], in: sources),
            date: try date(in: sources),
            recalledUId: try text(["rc-dlt-identifier"], in: sources + extras),
            callId: try text(["callId"], in: extras),
            // The app's own data may use these names otherwise: there, only a flag counts.
            mentioned: try flag(["isMentioned", "mentioned"], in: sources)
                ?? extras.contains { (try? flag(["isMentioned", "mentioned"], in: [$0])) == true },
            pushService: try flag(["pushFlag"], in: sources) ?? false)
    }

    /// The send time in Unix seconds: `msgTime` › `sentTime` › `timestamp` › `receivedTime`,
    /// in milliseconds (see ``seconds(_:)``); `nil` when none is present.
    static func date(in sources: [PayloadObject]) throws(IngestError) -> Int64? {
        for source in sources {
            for key in ["msgTime", "sentTime", "timestamp", "receivedTime"] {
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
