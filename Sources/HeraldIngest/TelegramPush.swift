/// One Telegram push, whichever shape it came in, reduced to what the mapping reads.
///
/// Shapes (all may arrive MTProto-encrypted as `{"p": …}` and decrypt to one of them):
/// - Android / FCM (core.telegram.org/api/push-updates): `loc_key`, `loc_args` and a `custom`
///   object (or a string holding one), at the top level, under `data`, or under an FCM v1
///   request's `message.data`;
/// - iOS (Telegram-iOS `NotificationService`): flat string fields `from_id`, `chat_id`,
///   `channel_id`, `encryption_id`, `msg_id`, `topic_id`, `silent`, `call_id`, … beside `aps`;
///   a message's text already rendered in `aps.alert` (a string, or `title`/`subtitle`/`body`)
///   and no key, or a `loc-key` (with a hyphen) at the top level for the actions
///   (`MESSAGE_DELETED`, `READ_HISTORY`, `READ_REACTION`, `SESSION_REVOKE`, …), or the key and
///   arguments as an APNs localized alert (`aps.alert.loc-key` / `loc-args`); and the VoIP
///   payload of an incoming call (`call_id`, `call_ah`, `from_id`, `updates`, no `aps`).
struct TelegramPush {
    /// The loc_key; `nil` for an iOS push that carries only rendered text.
    var locKey: String?
    /// The loc_args.
    var args: [String]
    /// The `custom` fields (for the iOS shape, the root itself).
    var custom: PayloadObject
    /// The object holding `user_id`, `date`, `message` and (outside `custom`) `silent`.
    var fields: PayloadObject
    /// The text an iOS alert already carries.
    var alert: Alert?
    /// The `aps` object of an iOS push.
    var aps: PayloadObject?
    /// When FCM says the push was sent (the `date` beside `data`, `google.sent_time`), in
    /// order of preference; the mapping uses one only within TDLib's window around the
    /// receive time.
    var deliveryDates: [Int64] = []

    /// Rendered alert text.
    struct Alert {
        var title: String?
        var body: String?
    }

    /// Reads `root` in whichever shape it has.
    init(_ root: PayloadObject) throws(IngestError) {
        if let aps = try root.object("aps") {
            try self.init(iOS: root, aps: aps)
            return
        }
        let data = try root.fcmData()
        let fields = data ?? root
        // FCM delivery times, as TDLib reads them: the `date` beside `data`, `google.sent_time`
        // (milliseconds) inside it.
        let sentDates = [data != nil ? try root.date("date") : nil, try fields.date("google.sent_time").map { $0 / 1000 }]
        if let key = try fields.string("loc-key"), !fields.has("loc_key") {
            // An iOS action push without `aps` (as Telegram-iOS reads a decrypted `p`).
            self.init(locKey: key, args: try fields.strings("loc-args") ?? [], custom: fields, fields: fields)
            deliveryDates = sentDates.compactMap { $0 }
            return
        }
        if !fields.has("loc_key"), fields.has("call_id"), fields.has("call_ah") {
            // The VoIP payload Telegram-iOS reports to CallKit: `call_id`, `call_ah`, `from_id`,
            // `updates`, with no key and no alert.
            self.init(locKey: nil, args: [], custom: fields, fields: fields)
            return
        }
        guard let locKey = try fields.string("loc_key") else { throw fields.error("loc_key", "missing") }
        let custom =
            try fields.object("custom", asJSONText: true)
            ?? PayloadObject([:], path: fields.field("custom"), format: .telegram)
        self.init(locKey: locKey, args: try fields.strings("loc_args") ?? [], custom: custom, fields: fields)
        deliveryDates = sentDates.compactMap { $0 }
    }

    /// Creates a push from its parts.
    init(locKey: String?, args: [String], custom: PayloadObject, fields: PayloadObject, alert: Alert? = nil, aps: PayloadObject? = nil) {
        self.locKey = locKey
        self.args = args
        self.custom = custom
        self.fields = fields
        self.alert = alert
        self.aps = aps
    }

    /// Reads the iOS shape: flat fields beside `aps`.
    init(iOS root: PayloadObject, aps: PayloadObject) throws(IngestError) {
        var locKey = try orElse(root.string("loc-key"), root.string("loc_key"))
        var args = try orElse(root.strings("loc-args"), root.strings("loc_args")) ?? []
        var alert: Alert?
        switch aps["alert"] {
        case nil:
            break
        case .string(let body)?:
            alert = Alert(title: nil, body: body)
        case .object(let members)?:
            let fields = PayloadObject(members, path: aps.field("alert"), format: .telegram)
            if locKey == nil, let key = try fields.string("loc-key") {
                locKey = key
                args = try fields.strings("loc-args") ?? []
            }
            var title = try fields.nonEmptyString("title")
            if let subtitle = try fields.nonEmptyString("subtitle") {
                title = title.map { "\($0): \(subtitle)" } ?? subtitle
            }
            if let topic = try root.nonEmptyString("topic_title") {
                title = title.map { "\(topic) (\($0))" } ?? topic
            }
            let body = try fields.string("body")
            if title != nil || body != nil { alert = Alert(title: title, body: body) }
        case let value?:
            throw aps.error("alert", "expected a string or an object, got \(value.typeName)")
        }
        let custom = try root.object("custom", asJSONText: true) ?? root
        self.init(locKey: locKey, args: args, custom: custom, fields: root, alert: alert, aps: aps)
    }

    /// Whether an iOS push marks itself as a reaction (`r` or `react_emoji` in `aps` or
    /// beside it, as Telegram-iOS tests them).
    var iOSReaction: Bool {
        guard let aps else { return false }
        return aps.has("r") || aps.has("react_emoji") || fields.has("r") || fields.has("react_emoji")
    }
}
