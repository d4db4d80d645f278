/// A key of the canonical JSON form that the decoder reads, with the type of its value.
///
/// Every key expects one value type whatever the event type, so a value can be parsed as
/// soon as its key is seen, before `type` is known.
enum EventKey: UInt8, CaseIterable {
    case type, account, chat, kind, id, date, silent, partial, title, body, sender, thread
    case maxId, ids, notificationId, groupId, maxNotificationId
    case groupCountMax, groupSizeMax, muted, disableMentions, disablePinned, source, reason
    case unreadOnly, mutedUntil, now

    /// The JSON type a key's value must have.
    enum ValueType {
        case string, integer, boolean, integers
    }

    /// The key as written in JSON.
    var name: String {
        switch self {
        case .type: "type"
        case .account: "account"
        case .chat: "chat"
        case .kind: "kind"
        case .id: "id"
        case .date: "date"
        case .silent: "silent"
        case .partial: "partial"
        case .title: "title"
        case .body: "body"
        case .sender: "sender"
        case .thread: "thread"
        case .maxId: "maxId"
        case .ids: "ids"
        case .notificationId: "notificationId"
        case .groupId: "groupId"
        case .maxNotificationId: "maxNotificationId"
        case .groupCountMax: "groupCountMax"
        case .groupSizeMax: "groupSizeMax"
        case .muted: "muted"
        case .disableMentions: "disableMentions"
        case .disablePinned: "disablePinned"
        case .source: "source"
        case .reason: "reason"
        case .unreadOnly: "unreadOnly"
        case .mutedUntil: "mutedUntil"
        case .now: "now"
        }
    }

    /// The type this key's value must have.
    var valueType: ValueType {
        switch self {
        case .type, .account, .chat, .kind, .title, .body, .sender, .thread, .source, .reason: .string
        case .id, .date, .maxId, .notificationId, .groupId, .maxNotificationId, .groupCountMax, .groupSizeMax: .integer
        case .mutedUntil, .now: .integer
        case .silent, .partial, .muted, .disableMentions, .disablePinned, .unreadOnly: .boolean
        case .ids: .integers
        }
    }

    /// The key whose UTF-8 name is exactly `bytes`, or `nil` for an unknown key.
    ///
    /// Dispatches on the length and first bytes, then compares every byte.
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 2 else { return nil }
        let candidate: EventKey
        switch (bytes.count, bytes[0]) {
        case (2, UInt8(ascii: "i")): candidate = .id
        case (3, UInt8(ascii: "i")): candidate = .ids
        case (3, UInt8(ascii: "n")): candidate = .now
        case (4, UInt8(ascii: "t")): candidate = .type
        case (4, UInt8(ascii: "c")): candidate = .chat
        case (4, UInt8(ascii: "k")): candidate = .kind
        case (4, UInt8(ascii: "d")): candidate = .date
        case (4, UInt8(ascii: "b")): candidate = .body
        case (5, UInt8(ascii: "t")): candidate = .title
        case (5, UInt8(ascii: "m")): candidate = bytes[1] == UInt8(ascii: "a") ? .maxId : .muted
        case (6, UInt8(ascii: "s")):
            switch bytes[1] {
            case UInt8(ascii: "i"): candidate = .silent
            case UInt8(ascii: "e"): candidate = .sender
            default: candidate = .source
            }
        case (6, UInt8(ascii: "t")): candidate = .thread
        case (6, UInt8(ascii: "r")): candidate = .reason
        case (7, UInt8(ascii: "a")): candidate = .account
        case (7, UInt8(ascii: "p")): candidate = .partial
        case (7, UInt8(ascii: "g")): candidate = .groupId
        case (10, UInt8(ascii: "u")): candidate = .unreadOnly
        case (10, UInt8(ascii: "m")): candidate = .mutedUntil
        case (12, UInt8(ascii: "g")): candidate = .groupSizeMax
        case (13, UInt8(ascii: "g")): candidate = .groupCountMax
        case (13, UInt8(ascii: "d")): candidate = .disablePinned
        case (14, UInt8(ascii: "n")): candidate = .notificationId
        case (15, UInt8(ascii: "d")): candidate = .disableMentions
        case (17, UInt8(ascii: "m")): candidate = .maxNotificationId
        default: return nil
        }
        guard candidate.matches(bytes) else { return nil }
        self = candidate
    }

    /// Whether `bytes` spell this key.
    private func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var name = name
        return name.withUTF8 { utf8 in
            utf8.count == bytes.count && memcmpEqual(utf8.baseAddress!, bytes.baseAddress!, count: utf8.count)
        }
    }
}

/// Whether `count` bytes at `a` and `b` are equal.
private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafeRawPointer, count: Int) -> Bool {
    for offset in 0..<count where a[offset] != b.load(fromByteOffset: offset, as: UInt8.self) {
        return false
    }
    return true
}
