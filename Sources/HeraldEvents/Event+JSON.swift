import Foundation

extension Event {
    /// Decodes and validates one canonical JSON event (one line of the JSONL form).
    ///
    /// Unknown keys are ignored (so `herald export` lines, which add `seq` and `recorded`,
    /// read back). Every other problem throws an ``EventError`` naming the field.
    public init(json: some DataProtocol) throws(EventError) {
        let data = json as? Data ?? Data(json)
        do {
            self = try Self.decoder.decode(Event.self, from: data)
        } catch let error as EventError {
            throw error
        } catch let error as DecodingError {
            throw EventError(decoding: error)
        } catch {
            throw EventError(field: "", reason: "invalid JSON: \(error)")
        }
        try validate()
    }

    /// Decodes and validates one canonical JSON event from a string.
    public init(json: String) throws(EventError) {
        try self.init(json: Data(json.utf8))
    }

    /// The canonical JSON form: compact, keys in the order of SEMANTICS §1, optional fields
    /// omitted when absent, `silent` and `partial` written only when true.
    public var jsonString: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.string
    }

    /// Writes the canonical JSON object into `writer`, optionally with extra leading fields.
    public func writeJSON(to writer: inout JSONWriter, extra: (inout JSONWriter) -> Void = { _ in }) {
        writer.objectStart()
        extra(&writer)
        writer.key("type"); writer.string(type.rawValue)
        writer.key("account"); writer.string(account)
        switch payload {
        case .notify(let n):
            writer.key("chat"); writer.string(n.chat)
            writer.key("kind"); writer.string(n.kind.rawValue)
            writer.key("id"); writer.int(n.id)
            writer.key("date"); writer.int(n.date)
            if n.silent { writer.key("silent"); writer.bool(true) }
            if n.partial { writer.key("partial"); writer.bool(true) }
            writer.optional("title", n.title)
            writer.optional("body", n.body)
            writer.optional("sender", n.sender)
            writer.optional("thread", n.thread)
        case .edit(let e):
            writer.key("chat"); writer.string(e.chat)
            writer.key("kind"); writer.string(e.kind.rawValue)
            writer.key("id"); writer.int(e.id)
            writer.optional("title", e.title)
            writer.optional("body", e.body)
            if e.partial { writer.key("partial"); writer.bool(true) }
        case .read(let chat, let maxId):
            writer.key("chat"); writer.string(chat)
            writer.key("maxId"); writer.int(maxId)
        case .delete(let ids, let chat):
            writer.optional("chat", chat)
            writer.key("ids"); writer.ints(ids)
        case .readReactions(let chat, let ids):
            writer.key("chat"); writer.string(chat)
            writer.key("ids"); writer.ints(ids)
        case .endCall(let chat, let id):
            writer.key("chat"); writer.string(chat)
            writer.key("id"); writer.int(id)
        case .dismiss(let notificationId):
            writer.key("notificationId"); writer.int(notificationId)
        case .dismissGroup(let groupId, let maxNotificationId):
            writer.key("groupId"); writer.int(groupId)
            if let maxNotificationId { writer.key("maxNotificationId"); writer.int(maxNotificationId) }
        case .options(let countMax, let sizeMax):
            if let countMax { writer.key("groupCountMax"); writer.int(Int64(countMax)) }
            if let sizeMax { writer.key("groupSizeMax"); writer.int(Int64(sizeMax)) }
        case .chatSettings(let s):
            writer.key("chat"); writer.string(s.chat)
            if let v = s.muted { writer.key("muted"); writer.bool(v) }
            if let v = s.disableMentions { writer.key("disableMentions"); writer.bool(v) }
            if let v = s.disablePinned { writer.key("disablePinned"); writer.bool(v) }
        case .revoke:
            break
        case .note(let source, let reason):
            writer.optional("source", source)
            writer.optional("reason", reason)
        }
        writer.objectEnd()
    }

    private static let decoder = JSONDecoder()
}

extension Event: Decodable {
    private enum Key: String, CodingKey {
        case type, account, chat, kind, id, date, silent, partial, title, body, sender, thread
        case maxId, ids, notificationId, groupId, maxNotificationId
        case groupCountMax, groupSizeMax, muted, disableMentions, disablePinned, source, reason
    }

    /// Decodes the canonical JSON form; see ``init(json:)`` for the validating entry point.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let typeName = try c.decode(String.self, forKey: .type)
        guard let type = EventType(rawValue: typeName) else {
            throw EventError(field: "type", reason: "unknown event type \"\(typeName)\"")
        }
        let account = try c.decode(String.self, forKey: .account)
        func kind() throws -> NotificationKind {
            let name = try c.decode(String.self, forKey: .kind)
            guard let kind = NotificationKind(rawValue: name) else {
                throw EventError(field: "kind", reason: "unknown kind \"\(name)\"")
            }
            return kind
        }
        let payload: Payload
        switch type {
        case .notify:
            payload = .notify(Notify(
                chat: try c.decode(String.self, forKey: .chat),
                kind: try kind(),
                id: try c.decode(Int64.self, forKey: .id),
                date: try c.decode(Int64.self, forKey: .date),
                silent: try c.decodeIfPresent(Bool.self, forKey: .silent) ?? false,
                partial: try c.decodeIfPresent(Bool.self, forKey: .partial) ?? false,
                title: try c.decodeIfPresent(String.self, forKey: .title),
                body: try c.decodeIfPresent(String.self, forKey: .body),
                sender: try c.decodeIfPresent(String.self, forKey: .sender),
                thread: try c.decodeIfPresent(String.self, forKey: .thread)))
        case .edit:
            payload = .edit(Edit(
                chat: try c.decode(String.self, forKey: .chat),
                kind: try kind(),
                id: try c.decode(Int64.self, forKey: .id),
                title: try c.decodeIfPresent(String.self, forKey: .title),
                body: try c.decodeIfPresent(String.self, forKey: .body),
                partial: try c.decodeIfPresent(Bool.self, forKey: .partial) ?? false))
        case .read:
            payload = .read(chat: try c.decode(String.self, forKey: .chat), maxId: try c.decode(Int64.self, forKey: .maxId))
        case .delete:
            payload = .delete(ids: try c.decode([Int64].self, forKey: .ids), chat: try c.decodeIfPresent(String.self, forKey: .chat))
        case .readReactions:
            payload = .readReactions(chat: try c.decode(String.self, forKey: .chat), ids: try c.decode([Int64].self, forKey: .ids))
        case .endCall:
            payload = .endCall(chat: try c.decode(String.self, forKey: .chat), id: try c.decode(Int64.self, forKey: .id))
        case .dismiss:
            payload = .dismiss(notificationId: try c.decode(Int64.self, forKey: .notificationId))
        case .dismissGroup:
            payload = .dismissGroup(
                groupId: try c.decode(Int64.self, forKey: .groupId),
                maxNotificationId: try c.decodeIfPresent(Int64.self, forKey: .maxNotificationId))
        case .options:
            payload = .options(
                groupCountMax: try c.decodeIfPresent(Int.self, forKey: .groupCountMax),
                groupSizeMax: try c.decodeIfPresent(Int.self, forKey: .groupSizeMax))
        case .chatSettings:
            payload = .chatSettings(ChatSettings(
                chat: try c.decode(String.self, forKey: .chat),
                muted: try c.decodeIfPresent(Bool.self, forKey: .muted),
                disableMentions: try c.decodeIfPresent(Bool.self, forKey: .disableMentions),
                disablePinned: try c.decodeIfPresent(Bool.self, forKey: .disablePinned)))
        case .revoke:
            payload = .revoke
        case .note:
            payload = .note(
                source: try c.decodeIfPresent(String.self, forKey: .source),
                reason: try c.decodeIfPresent(String.self, forKey: .reason))
        }
        self.init(account: account, payload)
    }
}

extension EventError {
    /// Names the field a `DecodingError` is about.
    init(decoding error: DecodingError) {
        func path(_ context: DecodingError.Context, _ extra: (any CodingKey)? = nil) -> String {
            var keys = context.codingPath
            if let extra { keys.append(extra) }
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context):
            self.init(field: path(context, key), reason: "missing")
        case .typeMismatch(let type, let context):
            self.init(field: path(context), reason: "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self.init(field: path(context), reason: "expected \(Self.describe(type)), got null")
        case .dataCorrupted(let context):
            let field = path(context)
            if field.isEmpty {
                self.init(field: "", reason: "invalid JSON")
            } else {
                self.init(field: field, reason: "invalid value (\(context.debugDescription))")
            }
        @unknown default:
            self.init(field: "", reason: "invalid JSON")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Int64.Type, is Int.Type: "an integer"
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is [Int64].Type: "an array of integers"
        default: "\(type)"
        }
    }
}
