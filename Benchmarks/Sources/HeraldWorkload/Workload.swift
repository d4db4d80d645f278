// HeraldWorkload generates realistic canonical event streams for benchmarks: many accounts
// and chats, mostly message notifications, partial pushes upgraded by full messages,
// duplicate deliveries, reads, deletes, dismissals and settings. Streams are seeded and
// deterministic: the same seed and configuration always give the same events.

import HeraldEvents

/// A deterministic stream of canonical events shaped like a notification service's traffic.
///
/// Call ``next()`` for one event at a time (nothing is buffered beyond a few pending
/// follow-ups), so streams of tens of millions of events need no memory.
public struct Workload: Sendable {
    /// The shape of the stream.
    public struct Configuration: Sendable, Hashable {
        /// Distinct accounts.
        public var accounts = 100
        /// Distinct chats over all accounts.
        public var chats = 10_000
        /// The random seed.
        public var seed: UInt64 = 0x4845_5241_4C44

        /// The defaults: 100 accounts, 10 000 chats, a fixed seed.
        public init(accounts: Int = 100, chats: Int = 10_000, seed: UInt64 = 0x4845_5241_4C44) {
            precondition(accounts > 0 && chats >= accounts, "need at least one chat per account")
            self.accounts = accounts
            self.chats = chats
            self.seed = seed
        }
    }

    /// One chat's generator state.
    struct ChatState: Sendable {
        let account: Int
        let name: String
        let title: String
        let isGroup: Bool
        var lastMessageId: Int64 = 0
        var readMaxId: Int64 = 0
        var lastCallId: Int64 = 0
        var lastReactionId: Int64 = 0
    }

    public let configuration: Configuration
    private var random: SplitMix64
    private var chats: [ChatState]
    private var accountNames: [String]
    /// Notifications created so far per account (an estimate of the next notification id).
    private var notified: [Int64]
    /// Follow-ups (full message after a partial push, duplicate deliveries), due at `dueAt`.
    private var pending: [(dueAt: Int, event: Event)] = []
    private var produced = 0
    private var clock: Int64 = 1_700_000_000

    /// Creates the stream described by `configuration`.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        accountNames = (0..<configuration.accounts).map { "tg:\(14_000_000 + $0 * 7919)" }
        notified = Array(repeating: 0, count: configuration.accounts)
        chats = []
        chats.reserveCapacity(configuration.chats)
        var setup = SplitMix64(seed: configuration.seed ^ 0x9E37_79B9_7F4A_7C15)
        for index in 0..<configuration.chats {
            let account = index % configuration.accounts
            let isGroup = setup.next() % 3 == 0
            let name = isGroup ? "chat:\(200_000 + index)" : "user:\(60_000 + index)"
            let title = isGroup
                ? "\(Words.pick(Words.firstNames, &setup)) @ \(Words.pick(Words.groupNames, &setup))"
                : "\(Words.pick(Words.firstNames, &setup)) \(Words.pick(Words.lastNames, &setup))"
            var chat = ChatState(account: account, name: name, title: title, isGroup: isGroup)
            chat.lastMessageId = Int64(setup.next() % 5_000 + 1)
            chat.readMaxId = chat.lastMessageId
            chats.append(chat)
        }
    }

    /// The next event of the stream.
    public mutating func next() -> Event {
        produced += 1
        clock += Int64(random.next() % 3)
        if let first = pending.first, first.dueAt <= produced {
            return pending.removeFirst().event
        }
        let roll = random.next() % 1000
        switch roll {
        case 0..<700: return notify()
        case 700..<850: return read()
        case 850..<880: return deleteInChat()
        case 880..<890: return deleteEverywhere()
        case 890..<915: return dismiss()
        case 915..<925: return dismissGroup()
        case 925..<955: return edit()
        case 955..<970: return readReactions()
        case 970..<980: return endCall()
        case 980..<993: return chatSettings()
        case 993..<995: return options()
        default: return note()
        }
    }

    /// The next `count` events.
    public mutating func next(_ count: Int) -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(count)
        for _ in 0..<count { events.append(next()) }
        return events
    }

    // MARK: - Event kinds

    /// Chats follow a skewed popularity: a few chats get most traffic.
    private mutating func pickChat() -> Int {
        let u = random.unit()
        return min(chats.count - 1, Int(u * u * u * Double(chats.count)))
    }

    private mutating func notify() -> Event {
        let c = pickChat()
        let kindRoll = random.next() % 100
        let account = accountNames[chats[c].account]
        let chat = chats[c]
        var kind = NotificationKind.message
        var id: Int64
        switch kindRoll {
        case 0..<82:
            chats[c].lastMessageId += 1
            id = chats[c].lastMessageId
        case 82..<89:
            kind = chat.isGroup ? .mention : .message
            chats[c].lastMessageId += 1
            id = chats[c].lastMessageId
        case 89..<91:
            kind = chat.isGroup ? .pinned : .message
            chats[c].lastMessageId += 1
            id = chats[c].lastMessageId
        case 91..<96:
            kind = .reaction
            chats[c].lastReactionId += 1
            id = max(1, chats[c].lastMessageId - Int64(random.next() % 20))
        case 96..<99:
            kind = .call
            chats[c].lastCallId += 1
            id = chats[c].lastCallId
        default:
            kind = .secretChat
            id = Int64(random.next() % 1_000_000 + 1)
        }
        notified[chat.account] += 1
        let body = Words.sentence(&random, words: Int(random.next() % 12) + 2)
        let sender = chat.isGroup ? "user:\(random.next() % 100_000 + 1)" : nil
        let silent = random.next() % 20 == 0
        let full = Event(account: account, .notify(.init(
            chat: chat.name, kind: kind, id: id, date: clock, silent: silent,
            title: chat.title, body: body, sender: sender)))
        // Duplicate delivery (the same payload from a second push path) a little later.
        if random.next() % 25 == 0 { schedule(full, after: Int(random.next() % 50) + 1) }
        // A partial push first (content from the push payload only), the full message after.
        if kind == .message && random.next() % 4 == 0 {
            schedule(full, after: Int(random.next() % 200) + 1)
            return Event(account: account, .notify(.init(
                chat: chat.name, kind: kind, id: id, date: clock, silent: silent, partial: true,
                title: chat.title, body: String(body.prefix(24)), sender: sender)))
        }
        return full
    }

    private mutating func schedule(_ event: Event, after distance: Int) {
        let due = produced + distance
        let position = pending.firstIndex { $0.dueAt > due } ?? pending.endIndex
        pending.insert((due, event), at: position)
    }

    private mutating func read() -> Event {
        let c = pickChat()
        let last = chats[c].lastMessageId
        // Usually read everything; sometimes stop a few messages short.
        let upTo = random.next() % 4 == 0 ? max(chats[c].readMaxId, last - Int64(random.next() % 5)) : last
        chats[c].readMaxId = max(1, upTo)
        return Event(account: accountNames[chats[c].account], .read(chat: chats[c].name, maxId: max(1, upTo)))
    }

    private mutating func recentIds(_ c: Int) -> [Int64] {
        let last = chats[c].lastMessageId
        let count = Int(random.next() % 3) + 1
        return (0..<count).map { _ in max(1, last - Int64(random.next() % 10)) }
    }

    private mutating func deleteInChat() -> Event {
        let c = pickChat()
        return Event(account: accountNames[chats[c].account], .delete(ids: recentIds(c), chat: chats[c].name))
    }

    private mutating func deleteEverywhere() -> Event {
        let c = pickChat()
        return Event(account: accountNames[chats[c].account], .delete(ids: recentIds(c), chat: nil))
    }

    private mutating func dismiss() -> Event {
        let a = Int(random.next() % UInt64(accountNames.count))
        let id = max(1, notified[a] - Int64(random.next() % 30))
        return Event(account: accountNames[a], .dismiss(notificationId: id))
    }

    private mutating func dismissGroup() -> Event {
        let a = Int(random.next() % UInt64(accountNames.count))
        let groups = max(1, Int64(chats.count / accountNames.count))
        let group = Int64(random.next() % UInt64(groups)) + 1
        let upTo: Int64? = random.next() % 2 == 0 ? nil : max(1, notified[a] - Int64(random.next() % 10))
        return Event(account: accountNames[a], .dismissGroup(groupId: group, maxNotificationId: upTo))
    }

    private mutating func edit() -> Event {
        let c = pickChat()
        let id = max(1, chats[c].lastMessageId - Int64(random.next() % 5))
        let body = Words.sentence(&random, words: Int(random.next() % 10) + 2)
        return Event(account: accountNames[chats[c].account], .edit(.init(
            chat: chats[c].name, kind: .message, id: id, title: chats[c].title, body: body)))
    }

    private mutating func readReactions() -> Event {
        let c = pickChat()
        return Event(account: accountNames[chats[c].account], .readReactions(chat: chats[c].name, ids: recentIds(c)))
    }

    private mutating func endCall() -> Event {
        let c = pickChat()
        return Event(account: accountNames[chats[c].account], .endCall(chat: chats[c].name, id: max(1, chats[c].lastCallId)))
    }

    private mutating func chatSettings() -> Event {
        let c = pickChat()
        let roll = random.next() % 3
        let settings = Event.ChatSettings(
            chat: chats[c].name,
            muted: roll == 0 ? random.next() % 2 == 0 : nil,
            disableMentions: roll == 1 ? random.next() % 2 == 0 : nil,
            disablePinned: roll == 2 ? random.next() % 2 == 0 : nil)
        return Event(account: accountNames[chats[c].account], .chatSettings(settings))
    }

    private mutating func options() -> Event {
        let a = Int(random.next() % UInt64(accountNames.count))
        return Event(account: accountNames[a], .options(
            groupCountMax: Int(random.next() % 16) + 5, groupSizeMax: Int(random.next() % 16) + 5))
    }

    private mutating func note() -> Event {
        let a = Int(random.next() % UInt64(accountNames.count))
        return Event(account: accountNames[a], .note(source: "fcm", reason: "unsupported payload type"))
    }
}

extension SplitMix64 {
    /// A uniform value in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
