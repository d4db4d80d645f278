/// Builds a notification's title, body and sender from Telegram's `loc_key` and `loc_args`.
///
/// Telegram sends a localization key and its arguments rather than text. Herald does not ship
/// Telegram's string tables, so it renders them in a fixed, documented way:
/// - `CHAT_*` keys (groups): arguments are sender, chat title, then the rest;
///   title = `"sender @ chat"`, sender = the sender;
/// - `CHANNEL_*` keys: the first argument is the channel title; title = it, no sender;
/// - every other key: title = sender = the first argument.
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

    /// Renders `locKey` with `args`.
    static func render(locKey: String, args: [String]) -> Rendered {
        var rendered = Rendered()
        var rest = args[...]
        if locKey.hasPrefix("CHAT_") {
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
        let action = readableAction(locKey)
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

    /// The key without its chat-type and `MESSAGE_` prefixes, lowercased, words spaced:
    /// `CHAT_MESSAGE_CONTACT` → `contact`, `PINNED_PHOTO` → `pinned photo`.
    static func readableAction(_ locKey: String) -> String {
        var key = Substring(locKey)
        for prefix in ["CHAT_", "CHANNEL_"] where key.hasPrefix(prefix) {
            key = key.dropFirst(prefix.count)
        }
        if key.hasPrefix("MESSAGE_") { key = key.dropFirst("MESSAGE_".count) }
        return key.lowercased().split(separator: "_").joined(separator: " ")
    }
}
