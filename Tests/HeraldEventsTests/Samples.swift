import HeraldEvents

/// One event of every type, with optional fields both present and absent, unicode strings and
/// extreme ids.
enum Samples {
    static let account = "tg:14124122"

    static let everyType: [Event] = [
        Event(account: account, .notify(.init(chat: "user:1", kind: .message, id: 1, date: 0))),
        Event(account: "zulip:https://chat.example/|10", .notify(.init(
            chat: "stream:10:тест 🚀", kind: .mention, id: .max, date: .max, silent: true, partial: true,
            title: "Ärger \"quoted\" \\ back", body: "line1\nline2\t\u{0001}", sender: "u:5", thread: "𝄞"))),
        Event(account: account, .notify(.init(chat: "c", kind: .pinned, id: 42, date: 1_700_000_000, title: ""))),
        Event(account: account, .notify(.init(chat: "c", kind: .reaction, id: 43, date: 1, body: "👍"))),
        Event(account: account, .notify(.init(chat: "c", kind: .call, id: 44, date: 2, sender: "s"))),
        Event(account: account, .notify(.init(chat: "secret:4", kind: .secretChat, id: 1, date: 3, thread: "t"))),
        Event(account: account, .edit(.init(chat: "c", kind: .message, id: 7))),
        Event(account: account, .edit(.init(chat: "c", kind: .mention, id: .max, title: "新", body: "body", partial: true))),
        Event(account: account, .read(chat: "c", maxId: .max)),
        Event(account: account, .delete(ids: [1, 2, .max], chat: nil)),
        Event(account: account, .delete(ids: [5], chat: "chat:9")),
        Event(account: account, .readReactions(chat: "c", ids: [3, 4])),
        Event(account: account, .endCall(chat: "c", id: 78)),
        Event(account: account, .dismiss(notificationId: 3)),
        Event(account: account, .dismissGroup(groupId: 1, maxNotificationId: nil)),
        Event(account: account, .dismissGroup(groupId: .max, maxNotificationId: 99)),
        Event(account: account, .options(groupCountMax: 0, groupSizeMax: 25)),
        Event(account: account, .options(groupCountMax: nil, groupSizeMax: nil)),
        Event(account: account, .chatSettings(.init(chat: "c", muted: true))),
        Event(account: account, .chatSettings(.init(chat: "c", muted: false, disableMentions: true, disablePinned: false))),
        Event(account: account, .revoke),
        Event(account: account, .note(source: "telegram", reason: "DC_UPDATE")),
        Event(account: account, .note(source: nil, reason: nil)),
        // SEMANTICS 1.2.
        Event(account: account, .notify(.init(chat: "c", kind: .message, id: 45, date: 4, unreadOnly: true))),
        Event(account: account, .notify(.init(
            chat: "c", kind: .mention, id: .max, date: .max, silent: true, partial: true, unreadOnly: true,
            title: "t", body: "b", sender: "s", thread: "th"))),
        Event(account: account, .readAll(chat: nil)),
        Event(account: account, .readAll(chat: "stream:10:тест 🚀")),
        Event(account: account, .readMentions(chat: "c", ids: nil)),
        Event(account: account, .readMentions(chat: "c", ids: [1, .max])),
        Event(account: account, .clearHistory(chat: "c", maxId: 1)),
        Event(account: account, .clearHistory(chat: "chat:9", maxId: .max)),
        Event(account: account, .tick(now: 0)),
        Event(account: account, .tick(now: .max)),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1_764_266_400))),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 1, disableMentions: false, disablePinned: true))),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: .max))),
        Event(account: account, .chatSettings(.init(chat: "c", mutedUntil: 0))),
        Event(account: account, .chatSettings(.init(chat: "c", disablePinned: false))),
    ]
}
