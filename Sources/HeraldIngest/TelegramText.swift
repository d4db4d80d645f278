/// Builds a notification's title, body and sender from Telegram's `loc_key` and `loc_args`.
///
/// Telegram sends a localization key and its arguments rather than text. Herald does not ship
/// Telegram's string tables, so it renders them in a fixed, documented way:
/// - `CHAT_*` keys (groups): arguments are sender, chat title, then the rest;
///   title = `"sender @ chat"`, sender = the sender;
/// - `CHANNEL_*` keys: the first argument is the channel title; title = it, no sender;
/// - every other key: title = sender = the first argument;
/// - `PINNED_*` in a group (`groupPin`): arguments are sender, the rest, then the group's
///   title last (Telegram's pinned strings put the chat's title at the end):
///   title = `"sender @ group"`, sender = the sender, so the body never holds the title.
///
/// The body is the remaining arguments: for text messages (`*MESSAGE_TEXT`) the text itself,
/// otherwise a readable action taken from the key followed by the arguments, e.g.
/// `CHAT_MESSAGE_CONTACT` with `["John Doe", "My magical group", "Contact Exchange"]` gives
/// title `John Doe @ My magical group` and body `contact: Contact Exchange`.
enum TelegramText {
    /// The rendered parts; `nil` when there is nothing to show.
    struct Rendered: Hashable {
        var title: String?
        var body: String?
        var sender: String?
    }

    /// The body of a secret-chat message, whose content a push never carries.
    static let secretMessageBody = "new secret message"

    /// Bodies for keys whose words alone read badly.
    static let actions: [String: String] = [
        "ENCRYPTED_MESSAGE": secretMessageBody,
        "ENCRYPTION_REQUEST": "secret chat request",
        "PHONE_CALL_REQUEST": "incoming call",
        "VIDEO_CALL_REQUEST": "incoming video call",
        "PHONE_CALL_MISSED": "missed call",
        "VIDEO_CALL_MISSED": "missed video call",
        "PHONE_CALL_DECLINE": "declined call",
        "VIDEO_CALL_DECLINE": "declined video call",
        "CONF_CALL_REQUEST": "incoming group call",
        "CONF_VIDEOCALL_REQUEST": "incoming group video call",
        "CONF_CALL_MISSED": "missed group call",
        "CONF_VIDEOCALL_MISSED": "missed group video call",
        "CONTACT_JOINED": "joined Telegram",
    ]

    /// Renders `locKey` with `args`; `groupPin` marks a `PINNED_*` key in a group.
    static func render(locKey: String, args: [String], groupPin: Bool = false) -> Rendered {
        var rendered = Rendered()
        var rest = args[...]
        if groupPin, rest.count >= 2, let sender = rest.popFirst(), let chatTitle = rest.popLast() {
            rendered.sender = sender
            rendered.title = "\(sender) @ \(chatTitle)"
        } else if locKey.hasPrefix("CHAT_") {
            if let sender = rest.popFirst() {
                rendered.sender = sender
                rendered.title = sender
                if let chatTitle = rest.popFirst() { rendered.title = "\(sender) @ \(chatTitle)" }
            }
        } else if locKey.hasPrefix("CHANNEL_") {
            rendered.title = rest.popFirst()
        } else if let sender = rest.popFirst() {
            rendered.sender = sender
            rendered.title = sender
        }
        let action = actions[locKey] ?? readableAction(locKey)
        if locKey.hasSuffix("MESSAGE_TEXT") || locKey == "MESSAGE_TEXT" {
            rendered.body = rest.isEmpty ? nil : rest.joined(separator: " ")
        } else if rest.isEmpty {
            rendered.body = action.isEmpty ? nil : action
        } else {
            let arguments = rest.joined(separator: ", ")
            rendered.body = action.isEmpty ? arguments : "\(action): \(arguments)"
        }
        return rendered
    }

    /// The key without its chat-type and `MESSAGE_` prefixes, lowercased, words spaced, and
    /// `NOTEXT` read as `message`: `CHAT_MESSAGE_CONTACT` → `contact`, `PINNED_PHOTO` →
    /// `pinned photo`, `PINNED_NOTEXT` → `pinned message`.
    static func readableAction(_ locKey: String) -> String {
        var key = Substring(locKey)
        for prefix in ["CHAT_", "CHANNEL_"] where key.hasPrefix(prefix) {
            key = key.dropFirst(prefix.count)
        }
        if key.hasPrefix("MESSAGE_") { key = key.dropFirst("MESSAGE_".count) }
        // `*_NOTEXT` keys announce a message whose content the push leaves out.
        return key.lowercased().split(separator: "_").map { $0 == "notext" ? "message" : $0 }.joined(separator: " ")
    }
}
