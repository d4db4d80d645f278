import HeraldEvents

/// A RongCloud conversation type (`RCConversationType` on iOS, `Conversation.ConversationType`
/// on Android), as the codes and numbers RongCloud's payloads spell it, and the name Herald
/// puts in a chat (`<name>:<targetId>`).
public enum RongCloudConversation: Int, CaseIterable, Sendable {
    /// One-to-one (`ConversationType_PRIVATE`, 1; iOS push code `PR`).
    case `private` = 1
    /// A discussion, the old ad-hoc group (2; `DS`).
    case discussion = 2
    /// A group (3; `GRP`).
    case group = 3
    /// A chat room (4; `CR`).
    case chatroom = 4
    /// Customer service (5; `CS`).
    case customerService = 5
    /// System messages (6; `SYS`).
    case system = 6
    /// An app public service (7; `MC`).
    case appPublicService = 7
    /// A public service (8; `MP`).
    case publicService = 8
    /// The push service: notices sent with the server's `/push.json`, no IM message behind
    /// them (9; `PH`).
    case pushService = 9
    /// An ultra group (10; `UG`).
    case ultraGroup = 10
    /// An encrypted one-to-one conversation (11).
    case encrypted = 11
    /// An RTC room's messages (12).
    case rtc = 12

    /// The name in a Herald chat: `private`, `discussion`, `group`, `chatroom`,
    /// `customer_service`, `system`, `app_public_service`, `public_service`, `push_service`,
    /// `ultragroup`, `encrypted`, `rtc`.
    public var chatName: String {
        switch self {
        case .private: "private"
        case .discussion: "discussion"
        case .group: "group"
        case .chatroom: "chatroom"
        case .customerService: "customer_service"
        case .system: "system"
        case .appPublicService: "app_public_service"
        case .publicService: "public_service"
        case .pushService: "push_service"
        case .ultraGroup: "ultragroup"
        case .encrypted: "encrypted"
        case .rtc: "rtc"
        }
    }

    /// The codes of the iOS push's `rc.cType` (IMKit's `RCKitUtility` names them so), and
    /// the spellings of Android's `RongPushConversationType` names, upper-cased without `_`.
    static let codes: [String: RongCloudConversation] = [
        "PR": .private, "DS": .discussion, "GRP": .group, "CR": .chatroom, "CS": .customerService,
        "SYS": .system, "MC": .appPublicService, "MP": .publicService, "PH": .pushService, "PS": .pushService,
        "UG": .ultraGroup,
        "PRIVATE": .private, "DISCUSSION": .discussion, "GROUP": .group, "CHATROOM": .chatroom,
        "CUSTOMERSERVICE": .customerService, "SYSTEM": .system, "APPSERVICE": .appPublicService,
        "APPPUBLICSERVICE": .appPublicService, "PUBLICSERVICE": .publicService, "PUSHSERVICE": .pushService,
        "ULTRAGROUP": .ultraGroup, "ENCRYPTED": .encrypted, "RTC": .rtc,
    ]

    /// The conversation `key` of `fields` names: a number (or numeric string), an iOS code or
    /// an Android enum name; `nil` when absent or empty, an error naming the field when unknown.
    static func read(_ fields: PayloadObject, _ key: String) throws(IngestError) -> RongCloudConversation? {
        guard let value = fields[key], value.string != "" else { return nil }
        if let number = value.integer {
            guard let conversation = RongCloudConversation(rawValue: Int(truncatingIfNeeded: number)) else {
                throw fields.error(key, "unknown conversation type \(number)")
            }
            return conversation
        }
        guard let text = value.string else { throw fields.error(key, "expected a number or a code, got \(value.typeName)") }
        let normalized = text.uppercased().filter { $0 != "_" }
        guard let conversation = codes[normalized] else {
            throw fields.error(key, "unknown conversation type \"\(text)\"")
        }
        return conversation
    }

    /// The chat of a conversation: `<name>:<target>`, where `target` is the conversation's
    /// target on the receiver's side (the other person of a private conversation); the push
    /// service's chat is `push_service` when no target is named.
    static func chat(_ conversation: RongCloudConversation, target: String?) -> String? {
        guard let target, !target.isEmpty else { return conversation == .pushService ? conversation.chatName : nil }
        return "\(conversation.chatName):\(target)"
    }

    /// Whether the conversation is with one person, so the sender names it on the receiver's side.
    var isOneToOne: Bool { self == .private || self == .encrypted }
}
