/// What the JSON said about one field: nothing, `null`, a value, or a value of the wrong type.
enum FieldValue<Value> {
    case absent
    case null
    case value(Value)
    /// The value was present but unusable; the error names the field.
    case invalid(EventError)
}

/// The known fields of one event object as ``CanonicalJSONDecoder`` found them, in any order,
/// and their assembly into an ``Event`` in the order Herald has always read them.
struct EventFields {
    var type: FieldValue<String> = .absent, account: FieldValue<String> = .absent
    var chat: FieldValue<String> = .absent, kind: FieldValue<String> = .absent
    var title: FieldValue<String> = .absent, body: FieldValue<String> = .absent
    var sender: FieldValue<String> = .absent, thread: FieldValue<String> = .absent
    var source: FieldValue<String> = .absent, reason: FieldValue<String> = .absent
    var id: FieldValue<Int64> = .absent, date: FieldValue<Int64> = .absent
    var maxId: FieldValue<Int64> = .absent, notificationId: FieldValue<Int64> = .absent
    var groupId: FieldValue<Int64> = .absent, maxNotificationId: FieldValue<Int64> = .absent
    var groupCountMax: FieldValue<Int64> = .absent, groupSizeMax: FieldValue<Int64> = .absent
    var silent: FieldValue<Bool> = .absent, partial: FieldValue<Bool> = .absent
    var muted: FieldValue<Bool> = .absent, disableMentions: FieldValue<Bool> = .absent
    var disablePinned: FieldValue<Bool> = .absent, unreadOnly: FieldValue<Bool> = .absent
    var mutedUntil: FieldValue<Int64> = .absent, now: FieldValue<Int64> = .absent
    var ids: FieldValue<[Int64]> = .absent

    /// The keys seen so far, one bit per ``EventKey``.
    private var seen: UInt32 = 0
    /// The first known key that appeared twice.
    var duplicateKeyError: EventError?
    /// Set when the document is well-formed JSON but not an object.
    var topLevelError: EventError?

    /// Records that `key` was seen; `false` if it had been seen before.
    mutating func markSeen(_ key: EventKey) -> Bool {
        let bit: UInt32 = 1 << key.rawValue
        defer { seen |= bit }
        return seen & bit == 0
    }

    /// Stores a string field.
    mutating func set(_ key: EventKey, _ value: FieldValue<String>) {
        switch key {
        case .type: type = value
        case .account: account = value
        case .chat: chat = value
        case .kind: kind = value
        case .title: title = value
        case .body: body = value
        case .sender: sender = value
        case .thread: thread = value
        case .source: source = value
        case .reason: reason = value
        default: preconditionFailure("\(key) is not a string field")
        }
    }

    /// Stores an integer field.
    mutating func set(_ key: EventKey, _ value: FieldValue<Int64>) {
        switch key {
        case .id: id = value
        case .date: date = value
        case .maxId: maxId = value
        case .notificationId: notificationId = value
        case .groupId: groupId = value
        case .maxNotificationId: maxNotificationId = value
        case .groupCountMax: groupCountMax = value
        case .groupSizeMax: groupSizeMax = value
        case .mutedUntil: mutedUntil = value
        case .now: now = value
        default: preconditionFailure("\(key) is not an integer field")
        }
    }

    /// Stores a boolean field.
    mutating func set(_ key: EventKey, _ value: FieldValue<Bool>) {
        switch key {
        case .silent: silent = value
        case .partial: partial = value
        case .muted: muted = value
        case .disableMentions: disableMentions = value
        case .disablePinned: disablePinned = value
        case .unreadOnly: unreadOnly = value
        default: preconditionFailure("\(key) is not a boolean field")
        }
    }

    /// The event these fields describe, or the first error in reading order.
    func event() throws(EventError) -> Event {
        if let topLevelError { throw topLevelError }
        if let duplicateKeyError { throw duplicateKeyError }
        let typeName = try required(type, "type", "a string")
        guard let eventType = EventType(rawValue: typeName) else {
            throw EventError(field: "type", reason: "unknown event type \"\(typeName)\"")
        }
        let accountName = try required(account, "account", "a string")
        let payload: Event.Payload
        switch eventType {
        case .notify:
            payload = .notify(
                Event.Notify(
                    chat: try required(chat, "chat", "a string"),
                    kind: try notificationKind(),
                    id: try required(id, "id", "an integer"),
                    date: try required(date, "date", "an integer"),
                    silent: try optional(silent) ?? false,
                    partial: try optional(partial) ?? false,
                    unreadOnly: try optional(unreadOnly) ?? false,
                    title: try optional(title),
                    body: try optional(body),
                    sender: try optional(sender),
                    thread: try optional(thread)))
        case .edit:
            payload = .edit(
                Event.Edit(
                    chat: try required(chat, "chat", "a string"),
                    kind: try notificationKind(),
                    id: try required(id, "id", "an integer"),
                    title: try optional(title),
                    body: try optional(body),
                    partial: try optional(partial) ?? false))
        case .read:
            payload = .read(chat: try required(chat, "chat", "a string"), maxId: try required(maxId, "maxId", "an integer"))
        case .readAll:
            payload = .readAll(chat: try optional(chat))
        case .readMentions:
            payload = .readMentions(chat: try required(chat, "chat", "a string"), ids: try optional(ids))
        case .delete:
            let chatName = try optional(chat)
            if let historyMaxId = try optional(maxId) {
                if try optional(ids) != nil {
                    throw EventError(field: "maxId", reason: "a delete names either ids or maxId, not both")
                }
                guard let chatName else {
                    throw EventError(field: "chat", reason: "missing: a delete with maxId clears one chat's history")
                }
                payload = .clearHistory(chat: chatName, maxId: historyMaxId)
            } else {
                payload = .delete(ids: try required(ids, "ids", "an array of integers"), chat: chatName)
            }
        case .readReactions:
            payload = .readReactions(
                chat: try required(chat, "chat", "a string"), ids: try required(ids, "ids", "an array of integers"))
        case .endCall:
            payload = .endCall(chat: try required(chat, "chat", "a string"), id: try required(id, "id", "an integer"))
        case .dismiss:
            payload = .dismiss(notificationId: try required(notificationId, "notificationId", "an integer"))
        case .dismissGroup:
            payload = .dismissGroup(
                groupId: try required(groupId, "groupId", "an integer"),
                maxNotificationId: try optional(maxNotificationId))
        case .options:
            payload = .options(
                groupCountMax: try optional(groupCountMax).map(Int.init), groupSizeMax: try optional(groupSizeMax).map(Int.init))
        case .chatSettings:
            let chatName = try required(chat, "chat", "a string")
            let until = try optional(mutedUntil)
            let alias = try optional(muted)
            if until != nil && alias != nil {
                throw EventError(field: "mutedUntil", reason: "a chatSettings names either muted or mutedUntil, not both")
            }
            payload = .chatSettings(
                Event.ChatSettings(
                    chat: chatName,
                    mutedUntil: until ?? alias.map { $0 ? Event.ChatSettings.mutedForever : 0 },
                    disableMentions: try optional(disableMentions),
                    disablePinned: try optional(disablePinned)))
        case .tick:
            payload = .tick(now: try required(now, "now", "an integer"))
        case .revoke:
            payload = .revoke
        case .note:
            payload = .note(source: try optional(source), reason: try optional(reason))
        }
        return Event(account: accountName, payload)
    }

    /// The `kind` field, which must name a ``NotificationKind``.
    private func notificationKind() throws(EventError) -> NotificationKind {
        let name = try required(kind, "kind", "a string")
        guard let kind = NotificationKind(rawValue: name) else {
            throw EventError(field: "kind", reason: "unknown kind \"\(name)\"")
        }
        return kind
    }

    /// A field that must be present and not `null`.
    private func required<Value>(_ field: FieldValue<Value>, _ name: String, _ expected: String) throws(EventError) -> Value {
        switch field {
        case .value(let value): return value
        case .absent: throw EventError(field: name, reason: "missing")
        case .null: throw EventError(field: name, reason: "expected \(expected), got null")
        case .invalid(let error): throw error
        }
    }

    /// A field that may be absent; `null` counts as absent.
    private func optional<Value>(_ field: FieldValue<Value>) throws(EventError) -> Value? {
        switch field {
        case .value(let value): return value
        case .absent, .null: return nil
        case .invalid(let error): throw error
        }
    }
}
