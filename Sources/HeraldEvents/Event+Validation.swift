extension Event {
    /// The valid range of `groupCountMax` (0 disables the view).
    public static let groupCountMaxRange = 0...25
    /// The valid range of `groupSizeMax`.
    public static let groupSizeMaxRange = 1...25

    /// Checks the event against SEMANTICS §1 and throws an error naming the first bad field.
    public func validate() throws(EventError) {
        try Self.requireNonEmpty(account, "account")
        switch payload {
        case .notify(let n):
            try Self.requireNonEmpty(n.chat, "chat")
            try Self.requirePositive(n.id, "id")
            if n.date < 0 { throw EventError(field: "date", reason: "must be >= 0 (Unix seconds)") }
        case .edit(let e):
            try Self.requireNonEmpty(e.chat, "chat")
            try Self.requirePositive(e.id, "id")
        case .read(let chat, let maxId):
            try Self.requireNonEmpty(chat, "chat")
            try Self.requirePositive(maxId, "maxId")
        case .readAll(let chat):
            if let chat { try Self.requireNonEmpty(chat, "chat") }
        case .readMentions(let chat, let ids):
            try Self.requireNonEmpty(chat, "chat")
            if let ids { try Self.requireIds(ids, "ids") }
        case .delete(let ids, let chat):
            if let chat { try Self.requireNonEmpty(chat, "chat") }
            try Self.requireIds(ids, "ids")
        case .clearHistory(let chat, let maxId):
            try Self.requireNonEmpty(chat, "chat")
            try Self.requirePositive(maxId, "maxId")
        case .readReactions(let chat, let ids):
            try Self.requireNonEmpty(chat, "chat")
            try Self.requireIds(ids, "ids")
        case .endCall(let chat, let id):
            try Self.requireNonEmpty(chat, "chat")
            try Self.requirePositive(id, "id")
        case .dismiss(let notificationId):
            try Self.requirePositive(notificationId, "notificationId")
        case .dismissGroup(let groupId, let maxNotificationId):
            try Self.requirePositive(groupId, "groupId")
            if let maxNotificationId { try Self.requirePositive(maxNotificationId, "maxNotificationId") }
        case .options(let countMax, let sizeMax):
            if let countMax, !Self.groupCountMaxRange.contains(countMax) {
                throw EventError(field: "groupCountMax", reason: "must be in 0...25, got \(countMax)")
            }
            if let sizeMax, !Self.groupSizeMaxRange.contains(sizeMax) {
                throw EventError(field: "groupSizeMax", reason: "must be in 1...25, got \(sizeMax)")
            }
        case .chatSettings(let s):
            try Self.requireNonEmpty(s.chat, "chat")
            if let until = s.mutedUntil, until < 0 {
                throw EventError(field: "mutedUntil", reason: "must be >= 0 (Unix seconds; 0: not muted), got \(until)")
            }
        case .tick(let now):
            if now < 0 { throw EventError(field: "now", reason: "must be >= 0 (Unix seconds), got \(now)") }
        case .revoke, .note:
            break
        }
    }

    /// The longest account or chat name, in UTF-8 bytes.
    public static let nameLengthMax = 1024

    /// An account or chat name: non-empty, no NUL, at most ``nameLengthMax`` bytes.
    private static func requireNonEmpty(_ value: String, _ field: String) throws(EventError) {
        if value.isEmpty { throw EventError(field: field, reason: "must be a non-empty string") }
        let length = value.utf8.count
        if length > nameLengthMax {
            throw EventError(field: field, reason: "must be at most \(nameLengthMax) bytes of UTF-8, got \(length)")
        }
        // Over the contiguous bytes when there are (always, for names decoded from the log):
        // the generic `String.UTF8View.contains` walks index by index, a few percent of a
        // rebuild's decoding thread.
        let hasNul = value.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? value.utf8.contains(0)
        if hasNul { throw EventError(field: field, reason: "must not contain a NUL character") }
    }

    private static func requirePositive(_ value: Int64, _ field: String) throws(EventError) {
        if value <= 0 { throw EventError(field: field, reason: "must be > 0, got \(value)") }
    }

    private static func requireIds(_ ids: [Int64], _ field: String) throws(EventError) {
        if ids.isEmpty { throw EventError(field: field, reason: "must list at least one id") }
        for (index, id) in ids.enumerated() where id <= 0 {
            throw EventError(field: "\(field)[\(index)]", reason: "must be > 0, got \(id)")
        }
    }
}
