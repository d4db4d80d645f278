import HeraldEvents
import HeraldStore
import HeraldTestSupport


/// Valid events of every type over a few accounts and chats.
func randomEvents(count: Int, seed: UInt64) -> [Event] {
    var rng = SplitMix64(seed: seed)
    let accounts = ["tg:1", "tg:2", "zulip:https://z.example/|7"]
    let chats = ["user:1", "chat:2", "channel:3", "секрет:4"]
    var events: [Event] = []
    for i in 0..<count {
        let account = accounts.randomElement(using: &rng)!
        let chat = chats.randomElement(using: &rng)!
        let id = Int64.random(in: 1...500, using: &rng)
        let payload: Event.Payload
        let date = 1_700_000_000 + Int64(i)
        switch Int.random(in: 0..<14, using: &rng) {
        case 0..<6:
            payload = .notify(.init(
                chat: chat, kind: NotificationKind.allCases.randomElement(using: &rng)!, id: id,
                date: date, partial: Bool.random(using: &rng), unreadOnly: id % 11 == 0,
                title: "title \(i)", body: "body \(i) ✉️"))
        case 6: payload = .read(chat: chat, maxId: id)
        case 7: payload = .delete(ids: [id, id + 1], chat: Bool.random(using: &rng) ? chat : nil)
        case 8: payload = .dismiss(notificationId: Int64.random(in: 1...50, using: &rng))
        case 9: payload = .chatSettings(.init(chat: chat, muted: Bool.random(using: &rng)))
        // SEMANTICS 1.2.
        case 10: payload = .chatSettings(.init(chat: chat, mutedUntil: date + Int64.random(in: -5...40, using: &rng)))
        case 11: payload = Bool.random(using: &rng) ? .readAll(chat: id % 3 == 0 ? nil : chat) : .tick(now: date + 20)
        case 12: payload = .readMentions(chat: chat, ids: id % 2 == 0 ? nil : [id, id + 2])
        default: payload = .clearHistory(chat: chat, maxId: max(1, id / 3))
        }
        events.append(Event(account: account, payload))
    }
    return events
}

extension AsyncStream<Applied> {
    /// The first `count` elements of a follower's stream (fewer if it ends first).
    func first(_ count: Int) async -> [Applied] {
        var received: [Applied] = []
        for await applied in self {
            received.append(applied)
            if received.count == count { break }
        }
        return received
    }
}
