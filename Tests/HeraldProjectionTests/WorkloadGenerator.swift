import HeraldEvents
import HeraldTestSupport

/// Seeded random streams of valid events exercising every rule: duplicates, partial
/// upgrades, reads, deletes with and without chat, dismissals, settings, options, revokes.
struct WorkloadGenerator {
    /// The shape of a workload.
    struct Profile {
        var accounts = 3
        var chatsPerAccount = 6
        /// Percent weights of each event type; the rest of 100 goes to `notify`.
        var edit = 8, read = 10, delete = 6, readReactions = 4, endCall = 4, dismiss = 6
        var dismissGroup = 3, options = 3, chatSettings = 5, revoke = 1, note = 1
        /// SEMANTICS 1.2 events.
        var readAll = 2, readMentions = 3, clearHistory = 1, tick = 2
        /// Whether `notify` may be `unreadOnly` and `chatSettings` mute until a date (1.2);
        /// off, the stream is the one earlier rounds measured.
        var fields12 = true
        /// Percent of `notify` events that repeat an earlier object.
        var duplicate = 15
        /// Small option values make the count and size limits bite.
        var smallOptions = true

        /// The realistic mix of the speed target: 100 accounts, 10 000 chats, ~70 % notify.
        static let realistic = Profile(
            accounts: 100, chatsPerAccount: 100, edit: 4, read: 12, delete: 3, readReactions: 3, endCall: 3,
            dismiss: 4, dismissGroup: 1, options: 0, chatSettings: 1, revoke: 0, note: 0, readAll: 0, readMentions: 0,
            clearHistory: 0, tick: 0, fields12: false, duplicate: 5, smallOptions: false)
    }

    var random: SplitMix64
    let profile: Profile
    let accountNames: [String]
    let chatNames: [String]
    /// The highest message id handed out, per account and chat.
    var lastId: [[Int64]]
    /// The latest call and reaction object ids, per account and chat (calls end, reactions
    /// get seen: the targets of `endCall` and `readReactions` are mostly real).
    var lastCall: [[Int64]]
    var lastReaction: [[Int64]]
    /// How many notifications each account has probably created.
    var created: [Int64]
    var date: Int64 = 1_760_000_000
    /// How skewed the choice of account and chat is; 1 is uniform.
    var hotness = 1

    static let strings: [String?] = [nil, "", "hi", "Alice", "tab\there", "üñî©ødé ✓", "quote \" and \\", "a longer body text of a message"]

    init(seed: UInt64, profile: Profile = Profile()) {
        random = SplitMix64(seed: seed)
        self.profile = profile
        accountNames = (0..<profile.accounts).map { $0 == 1 ? "zulip:é|\($0)" : "acct-\($0)" }
        let prefixes = ["chat:", "user:", "secret:", "channel:", "Ω:"]
        chatNames = (0..<profile.chatsPerAccount).map { prefixes[$0 % prefixes.count] + String($0 * 7919 % 100_003) }
        lastId = Array(repeating: Array(repeating: 0, count: profile.chatsPerAccount), count: profile.accounts)
        created = Array(repeating: 0, count: profile.accounts)
        lastCall = lastId
        lastReaction = lastId
    }

    /// A number in `0..<bound`, skewed towards 0 when ``hotness`` > 1 (the least of
    /// `hotness` draws: a few busy accounts and chats, as in real life).
    mutating func pick(_ bound: Int) -> Int {
        var least = random.below(bound)
        for _ in 1..<max(1, hotness) { least = min(least, random.below(bound)) }
        return least
    }

    mutating func string() -> String? { Self.strings[random.below(Self.strings.count)] }

    /// An object id of `chat`: usually the next one, sometimes an old one (a duplicate).
    mutating func objectId(account: Int, chat: Int, fresh: Bool) -> Int64 {
        let last = lastId[account][chat]
        if !fresh && last > 0 { return 1 + Int64(random.below(Int(last))) }
        let id = last + 1 + Int64(random.below(3))
        lastId[account][chat] = id
        return id
    }

    mutating func next() -> Event {
        let a = pick(profile.accounts)
        let c = pick(profile.chatsPerAccount)
        let account = accountNames[a]
        let chat = chatNames[c]
        date += Int64(random.below(3))
        let p = profile
        var roll = random.below(100)
        func take(_ weight: Int) -> Bool {
            if roll < weight { return true }
            roll -= weight
            return false
        }
        if take(p.edit) {
            let kind = NotificationKind.allCases[random.below(6)]
            return Event(account: account, .edit(Event.Edit(
                chat: chat, kind: kind, id: objectId(account: a, chat: c, fresh: false) + 0,
                title: string(), body: string(), partial: random.chance(20))))
        }
        if take(p.read) {
            let last = lastId[a][c]
            let maxId = max(1, last - Int64(random.below(4)))
            return Event(account: account, .read(chat: chat, maxId: maxId))
        }
        if take(p.delete) {
            let ids = (0..<(1 + random.below(3))).map { _ in objectId(account: a, chat: c, fresh: false) + 0 }
            return Event(account: account, .delete(ids: ids.map { max(1, $0) }, chat: random.chance(35) ? nil : chat))
        }
        if take(p.readReactions) {
            let id = random.chance(70) && lastReaction[a][c] > 0 ? lastReaction[a][c] : objectId(account: a, chat: c, fresh: false)
            return Event(account: account, .readReactions(chat: chat, ids: [max(1, id)]))
        }
        if take(p.endCall) {
            let id = random.chance(70) && lastCall[a][c] > 0 ? lastCall[a][c] : objectId(account: a, chat: c, fresh: false)
            return Event(account: account, .endCall(chat: chat, id: max(1, id)))
        }
        if take(p.dismiss) {
            let id = 1 + Int64(random.below(Int(max(1, created[a] + 2))))
            return Event(account: account, .dismiss(notificationId: id))
        }
        if take(p.dismissGroup) {
            let group = 1 + Int64(random.below(profile.chatsPerAccount * 2))
            let maxId: Int64? = random.chance(50) ? nil : 1 + Int64(random.below(Int(max(1, created[a] + 1))))
            return Event(account: account, .dismissGroup(groupId: group, maxNotificationId: maxId))
        }
        if take(p.options) {
            let count: Int? = random.chance(30) ? nil : (p.smallOptions ? random.below(5) : random.below(26))
            let size: Int? = random.chance(30) ? nil : (p.smallOptions ? 1 + random.below(4) : 1 + random.below(25))
            return Event(account: account, .options(groupCountMax: count, groupSizeMax: size))
        }
        if take(p.chatSettings) {
            func flag() -> Bool? { random.chance(40) ? nil : random.chance(50) }
            if p.fields12 {
                // A mute until a date around now (some already over), or the two aliases.
                let until: Int64? =
                    random.chance(40) ? nil : random.chance(30) ? 0 : random.chance(20) ? Event.ChatSettings.mutedForever
                    : date - 30 + Int64(random.below(120))
                return Event(account: account, .chatSettings(Event.ChatSettings(
                    chat: chat, mutedUntil: until, disableMentions: flag(), disablePinned: flag())))
            }
            return Event(account: account, .chatSettings(Event.ChatSettings(
                chat: chat, muted: flag(), disableMentions: flag(), disablePinned: flag())))
        }
        if take(p.revoke) {
            created[a] = 0
            return Event(account: account, .revoke)
        }
        if take(p.note) {
            return Event(account: account, .note(source: "test", reason: random.chance(50) ? nil : "noop"))
        }
        if take(p.readAll) {
            return Event(account: account, .readAll(chat: random.chance(30) ? nil : chat))
        }
        if take(p.readMentions) {
            let ids: [Int64]? =
                random.chance(40) ? nil : (0..<(1 + random.below(3))).map { _ in max(1, objectId(account: a, chat: c, fresh: false)) }
            return Event(account: account, .readMentions(chat: chat, ids: ids))
        }
        if take(p.clearHistory) {
            return Event(account: account, .clearHistory(chat: chat, maxId: max(1, lastId[a][c] - Int64(random.below(6)))))
        }
        if take(p.tick) {
            return Event(account: account, .tick(now: date + Int64(random.below(80))))
        }
        let kindRoll = random.below(100)
        let kind: NotificationKind =
            kindRoll < 60 ? .message : kindRoll < 72 ? .mention : kindRoll < 80 ? .pinned
            : kindRoll < 88 ? .reaction : kindRoll < 95 ? .call : .secretChat
        let id = objectId(account: a, chat: c, fresh: !random.chance(p.duplicate))
        if kind == .call { lastCall[a][c] = id }
        if kind == .reaction { lastReaction[a][c] = id }
        created[a] += 1
        var notify = Event.Notify(
            chat: chat, kind: kind, id: max(1, id), date: date - Int64(random.below(20)),
            silent: random.chance(15), partial: random.chance(25),
            title: string(), body: string(), sender: random.chance(50) ? nil : "user:\(random.below(9))",
            thread: random.chance(80) ? nil : "t\(random.below(3))")
        if p.fields12 { notify.unreadOnly = random.chance(6) }
        return Event(account: account, .notify(notify))
    }
}
