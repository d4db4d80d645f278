import HeraldEvents

/// The flat forms Sygnal (matrix-org/sygnal) gives a push gateway notification on its way to a
/// device, read back into the notification object ``MatrixAdapter`` maps.
extension MatrixAdapter {
    /// Whether `members` look like a notification Sygnal flattened: a room or event id, or the
    /// counts with `prio` (a badge-only push).
    static func isSygnalFlat(_ members: [String: JSONValue]) -> Bool {
        members["room_id"] != nil || members["event_id"] != nil
            || (members["prio"] != nil && (members["unread"] != nil || members["missed_calls"] != nil))
    }

    /// The notification Sygnal built `fields` from (`gcmpushkin.py` `_build_data`,
    /// `webpushpushkin.py` `_build_payload`): `content_<key>` strings (FCM v1) gathered into
    /// `content`, `unread` / `missed_calls` into `counts`, `prio` `normal` (Sygnal's form of
    /// `low`) back to `low`. The result keeps `fields`'s path, so errors name the fields as
    /// the payload spells them.
    static func notification(sygnalFields fields: PayloadObject) throws(IngestError) -> PayloadObject {
        var members = fields.members
        if members["content"] == nil {
            var content: [String: JSONValue] = [:]
            for (key, value) in fields.members where key.hasPrefix("content_") {
                content[String(key.dropFirst("content_".count))] = value
                members[key] = nil
            }
            if !content.isEmpty { members["content"] = .object(content) }
        }
        var counts: [String: JSONValue] = [:]
        for key in ["unread", "missed_calls"] {
            if let value = fields[key] { counts[key] = value }
            members[key] = nil
        }
        if !counts.isEmpty { members["counts"] = .object(counts) }
        if try fields.string("prio") == "normal" { members["prio"] = .string("low") }
        return PayloadObject(members, path: fields.path, format: fields.format)
    }
}
