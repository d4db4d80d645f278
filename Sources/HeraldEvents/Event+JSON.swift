import Foundation

extension Event {
    /// Decodes and validates one canonical JSON event (one line of the JSONL form).
    ///
    /// Unknown keys are ignored (so `herald export` lines, which add `seq` and `recorded`,
    /// read back). Every other problem throws an ``EventError`` naming the field; see
    /// `CanonicalJSONDecoder` for what is rejected as malformed JSON.
    public init(json: some DataProtocol) throws(EventError) {
        let decoded = json.withContiguousStorageIfAvailable { buffer in
            Result { () throws(EventError) in try Event(json: UnsafeRawBufferPointer(buffer)) }
        }
        if let decoded {
            self = try decoded.get()
        } else {
            let bytes = Array(json)
            self = try bytes.withUnsafeBytes { buffer in
                Result { () throws(EventError) in try Event(json: buffer) }
            }.get()
        }
    }

    /// Decodes and validates one canonical JSON event from a string.
    public init(json: String) throws(EventError) {
        var text = json
        self = try text.withUTF8 { buffer in
            Result { () throws(EventError) in try Event(json: UnsafeRawBufferPointer(buffer)) }
        }.get()
    }

    /// Decodes and validates one canonical JSON event from UTF-8 bytes, valid only during
    /// the call.
    public init(json bytes: UnsafeRawBufferPointer) throws(EventError) {
        self = try CanonicalJSONDecoder.decode(bytes)
        try validate()
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
            if n.unreadOnly { writer.key("unreadOnly"); writer.bool(true) }
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
        case .readAll(let chat):
            writer.optional("chat", chat)
        case .readMentions(let chat, let ids):
            writer.key("chat"); writer.string(chat)
            if let ids { writer.key("ids"); writer.ints(ids) }
        case .delete(let ids, let chat):
            writer.optional("chat", chat)
            writer.key("ids"); writer.ints(ids)
        case .clearHistory(let chat, let maxId):
            writer.key("chat"); writer.string(chat)
            writer.key("maxId"); writer.int(maxId)
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
            if let countMax { writer.key("groupCountMax"); writer.int(countMax) }
            if let sizeMax { writer.key("groupSizeMax"); writer.int(sizeMax) }
        case .chatSettings(let s):
            writer.key("chat"); writer.string(s.chat)
            // The two dates `muted` stands for keep that form (as written before 1.2).
            if let v = s.muted {
                writer.key("muted"); writer.bool(v)
            } else if let until = s.mutedUntil {
                writer.key("mutedUntil"); writer.int(until)
            }
            if let v = s.disableMentions { writer.key("disableMentions"); writer.bool(v) }
            if let v = s.disablePinned { writer.key("disablePinned"); writer.bool(v) }
        case .tick(let now):
            writer.key("now"); writer.int(now)
        case .revoke:
            break
        case .note(let source, let reason):
            writer.optional("source", source)
            writer.optional("reason", reason)
        }
        writer.objectEnd()
    }
}
