import HeraldEvents

extension Ingest {
    /// Guesses a payload's format from its shape; `nil` when nothing matches.
    ///
    /// Rules, first match wins, for a JSON object ("under `data`" also covers an FCM v1
    /// request's `message.data`):
    /// - a `p` or `data.p` key → telegram (encrypted);
    /// - `loc_key` or `loc-key` (top level or under `data`), or `call_id` with `call_ah` (the
    ///   VoIP payload of a call) → telegram;
    /// - `push_key_id` or `push_account_id` (top level or under `data`) → zulip (an E2EE
    ///   wrapper, whose APNs form also has `aps`);
    /// - `aps` with a `zulip` object → zulip (Zulip's APNs form); `aps` with `rc` (an object or
    ///   JSON text of one) → rongcloud; `aps` with a flat `from_id`,
    ///   `chat_id`, `channel_id` or `encryption_id` that is a string of digits → telegram
    ///   (Telegram's iOS form); any other `aps` → apns;
    /// - RongCloud's Android and IMKit forms (``looksLikeRongCloud(_:data:)``) → rongcloud;
    /// - `realm_url` or `realm_uri` (top level or under `data`) → zulip;
    /// - `message.data` or `message.token` → fcm;
    /// - `notification` with `devices` → matrix;
    /// - a legacy FCM send request (`to`, `registration_ids` or `condition` with `data` or
    ///   `notification`) → fcm;
    /// - `room_id` and `event_id` strings at the top level → matrix (Sygnal's Web Push form);
    /// - `type` and `account` → herald.
    ///
    /// Anything that is not a JSON object but is a Web Push body (raw or base64url text, with
    /// a 65-byte P-256 key id) → webpush.
    package static func detect(_ payload: some Collection<UInt8>) -> PayloadFormat? {
        let bytes = Array(payload)
        guard bytes.count <= maxPayloadBytes else { return nil }
        if let value = try? JSONParser.parse(bytes), let members = value.object {
            return detect(object: members)
        }
        return WebPushAdapter.looksLikeBody(bytes) ? .webpush : nil
    }

    /// Whether `payload` is one JSON value as the adapters read it (a leading byte-order
    /// mark, surrounding whitespace and a trailing comma before `}` or `]` allowed).
    package static func isWellFormedJSON(_ payload: some Collection<UInt8>) -> Bool {
        payload.count <= maxPayloadBytes && (try? JSONParser.parse(Array(payload))) != nil
    }

    /// The flat keys naming a conversation in Telegram's iOS payloads (beside `aps`), always
    /// strings of digits there (Telegram-iOS reads them only as strings).
    static let telegramPeerKeys = ["from_id", "chat_id", "channel_id", "encryption_id"]

    /// Whether `value` is RongCloud's `rc`: an object, or JSON text of one (Android extras).
    static func isRongCloudObject(_ value: JSONValue?) -> Bool {
        if value?.object != nil { return true }
        guard let text = value?.string, let parsed = try? JSONParser.parse(Array(text.utf8)) else { return false }
        return parsed.object != nil
    }

    /// Whether a payload without `aps` is a RongCloud form: `rc` (IMKit's local notification,
    /// vendor extras), FCM data whose `message` is JSON text holding `rc`, the legacy Xiaomi
    /// content (`channelType` and `channelId`), a `PushNotificationMessage` (`pushId` with
    /// `conversationType` or `objectName`), or the connection's message (`messageUId` with
    /// `objectName`).
    static func looksLikeRongCloud(_ members: [String: JSONValue], data: [String: JSONValue]?) -> Bool {
        if isRongCloudObject(members["rc"]) { return true }
        for holder in [members, data].compactMap({ $0 }) {
            if let text = holder["message"]?.string, let parsed = try? JSONParser.parse(Array(text.utf8)),
                isRongCloudObject(parsed.object?["rc"])
            {
                return true
            }
        }
        if members["channelType"] != nil, members["channelId"] != nil { return true }
        if members["pushId"] != nil, members["conversationType"] != nil || members["objectName"] != nil { return true }
        return members["messageUId"] != nil && members["objectName"] != nil
    }

    /// The format of a parsed JSON object, by the rules of ``detect(_:)``.
    static func detect(object members: [String: JSONValue]) -> PayloadFormat? {
        let message = members["message"]?.object
        // FCM data: `data`, or `message.data` of an FCM v1 send request.
        let data = members["data"]?.object ?? message?["data"]?.object
        let notification = members["notification"]?.object
        if members["p"]?.string != nil || data?["p"]?.string != nil { return .telegram }
        for key in ["loc_key", "loc-key"] where members[key] != nil || data?[key] != nil { return .telegram }
        if members["call_id"] != nil, members["call_ah"] != nil { return .telegram }
        for key in ["push_key_id", "push_account_id"] where members[key] != nil || data?[key] != nil { return .zulip }
        if members["aps"] != nil {
            if members["zulip"]?.object != nil { return .zulip }
            if isRongCloudObject(members["rc"]) { return .rongcloud }
            if telegramPeerKeys.contains(where: { members[$0]?.string.flatMap(JSONValue.parseInteger) != nil }) {
                return .telegram
            }
            return .apns
        }
        if looksLikeRongCloud(members, data: data) { return .rongcloud }
        for key in ["realm_url", "realm_uri"] where members[key] != nil || data?[key] != nil { return .zulip }
        if let message, message["data"] != nil || message["token"] != nil { return .fcm }
        if let notification, notification["devices"] != nil { return .matrix }
        if FCMAdapter.isLegacyRequest(members), notification?["devices"] == nil { return .fcm }
        if members["room_id"]?.string != nil, members["event_id"]?.string != nil { return .matrix }
        if members["type"] != nil, members["account"] != nil { return .herald }
        return nil
    }
}
