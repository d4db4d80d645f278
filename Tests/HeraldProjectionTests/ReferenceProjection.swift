import HeraldEvents
import HeraldProjection

/// A deliberately naive projection, written from SEMANTICS.md independently of the fast one:
/// it keeps every notification forever, every identity in a set, and recomputes the whole
/// visible view from scratch before and after each event. Slow and obviously right.
struct ReferenceProjection {
    struct Identity: Hashable {
        var chat: String
        var objectClass: ObjectClass
        var id: Int64
    }

    struct Group {
        var id: Int64
        var type: GroupType
        var chat: String
    }

    struct Chat {
        var readMaxId: Int64 = 0
        var mutedUntil: Int64 = 0
        var disableMentions = false
        var disablePinned = false
        /// Unread message ids (SEMANTICS 1.2 §4 rule 4).
        var unread: Set<Int64> = []
        /// Unread mentions: ended by `readMentions`, `readAll` and deletes, not by `read`.
        var unreadMentions: Set<Int64> = []
        var deleted: Set<Int64> = []
        /// The cleared-history mark (§6 `delete` with `maxId`).
        var clearedMark: Int64 = 0
        var groups: [GroupType: Int64] = [:]
        /// Dismissal marks by group type (§6 `dismissGroup`).
        var dismissalMarks: [GroupType: Int64] = [:]

        func isMuted(at time: Int64) -> Bool { mutedUntil > time }
    }

    struct Account {
        var groupCountMax = 10
        var groupSizeMax = 10
        var clock: Int64 = 0
        var nextNotificationId: Int64 = 1
        var nextGroupId: Int64 = 1
        var chats: [String: Chat] = [:]
        var groups: [Int64: Group] = [:]
        /// Every notification ever created, by id, with its group id.
        var notifications: [Int64: (notification: HeraldNotification, group: Int64, chat: String)] = [:]
        var named: Set<Identity> = []
        /// Identity → notification id.
        var notificationOf: [Identity: Int64] = [:]
        var deletedEverywhere: Set<Int64> = []
    }

    /// One visible group as the view shows it.
    struct Shown {
        var group: Group
        var totalCount: Int
        var notifications: [HeraldNotification]
    }

    var configuration: Projection.Configuration
    var seq: UInt64 = 0
    var accounts: [String: Account] = [:]

    init(configuration: Projection.Configuration = .init()) {
        self.configuration = configuration
    }

    func fresh() -> Account {
        var account = Account()
        account.groupCountMax = configuration.groupCountMaxOverride ?? 10
        account.groupSizeMax = configuration.groupSizeMaxOverride ?? 10
        return account
    }

    // MARK: View

    static func totalCount(_ account: Account, group: Int64) -> Int {
        counts(account)[group] ?? 0
    }

    /// Every group's `totalCount` (SEMANTICS 1.2 §7).
    static func counts(_ account: Account) -> [Int64: Int] {
        var totals: [Int64: Int] = [:]
        for (id, group) in account.groups {
            let chat = account.chats[group.chat]!
            switch group.type {
            case .messages:
                totals[id] = chat.isMuted(at: account.clock) ? 0 : chat.unread.count
            case .mentions:
                totals[id] = chat.unreadMentions.count
                    + account.notifications.values.filter {
                        $0.group == id && ($0.notification.kind == .pinned || $0.notification.kind == .reaction)
                            && isLive($0.notification.status)
                    }.count
            case .calls, .secretChat:
                totals[id] = account.notifications.values.filter { $0.group == id && $0.notification.status == .active }.count
            }
        }
        return totals
    }

    /// The visible groups in visible order (SEMANTICS §8), recomputed from everything.
    static func view(_ account: Account) -> [Shown] {
        var active: [Int64: [HeraldNotification]] = [:]
        for entry in account.notifications.values where entry.notification.status == .active {
            active[entry.group, default: []].append(entry.notification)
        }
        var candidates: [(date: Int64, group: Int64, active: [HeraldNotification])] = []
        for (group, list) in active {
            let sorted = list.sorted { $0.id < $1.id }
            candidates.append((sorted.map(\.date).max()!, group, sorted))
        }
        candidates.sort { $0.date != $1.date ? $0.date > $1.date : $0.group > $1.group }
        let totals = counts(account)
        return candidates.prefix(account.groupCountMax).map { candidate in
            Shown(
                group: account.groups[candidate.group]!, totalCount: totals[candidate.group] ?? 0,
                notifications: Array(candidate.active.suffix(account.groupSizeMax)))
        }
    }

    // MARK: Apply

    mutating func apply(_ event: Event, seq: UInt64) -> [Update] {
        precondition(seq > self.seq)
        self.seq = seq
        var account = accounts[event.account] ?? fresh()
        let before = Self.view(account)
        var created: HeraldNotification?
        if case .revoke = event.payload {
            accounts[event.account] = fresh()
            return before.sorted { $0.group.id < $1.group.id }.map { shown in
                .group(
                    GroupUpdate(
                        groupId: shown.group.id, type: shown.group.type, chat: shown.group.chat, totalCount: 0,
                        isSilent: true, added: [], removedIds: shown.notifications.map(\.id)))
            }
        }
        if let chat = event.chat, account.chats[chat] == nil { account.chats[chat] = Chat() }
        created = Self.mutate(&account, event.payload, configuration: configuration)
        accounts[event.account] = account
        let after = Self.view(account)
        return Self.diff(before: before, after: after, account: account, created: created)
    }

    static func diff(before: [Shown], after: [Shown], account: Account, created: HeraldNotification?) -> [Update] {
        var updates: [Update] = []
        let afterIds = Set(after.map(\.group.id))
        let beforeById = Dictionary(uniqueKeysWithValues: before.map { ($0.group.id, $0) })
        for shown in before.sorted(by: { $0.group.id < $1.group.id }) where !afterIds.contains(shown.group.id) {
            updates.append(
                .group(
                    GroupUpdate(
                        groupId: shown.group.id, type: shown.group.type, chat: shown.group.chat,
                        totalCount: totalCount(account, group: shown.group.id), isSilent: true, added: [],
                        removedIds: shown.notifications.map(\.id))))
        }
        var contentUpdates: [Update] = []
        for shown in after.sorted(by: { $0.group.id < $1.group.id }) {
            let old = beforeById[shown.group.id]
            let oldIds = Set(old?.notifications.map(\.id) ?? [])
            let newIds = Set(shown.notifications.map(\.id))
            let added = shown.notifications.filter { !oldIds.contains($0.id) }
            let removed = (old?.notifications ?? []).map(\.id).filter { !newIds.contains($0) }
            if !added.isEmpty || !removed.isEmpty || old?.totalCount != shown.totalCount {
                let loud = added.contains { $0.id == created?.id && created?.silent == false }
                updates.append(
                    .group(
                        GroupUpdate(
                            groupId: shown.group.id, type: shown.group.type, chat: shown.group.chat,
                            totalCount: shown.totalCount, isSilent: !loud, added: added, removedIds: removed)))
            }
            for notification in shown.notifications {
                if let previous = old?.notifications.first(where: { $0.id == notification.id }),
                    !previous.hasSameContent(as: notification)
                {
                    contentUpdates.append(.notification(NotificationUpdate(groupId: shown.group.id, notification: notification)))
                }
            }
        }
        contentUpdates.sort {
            guard case .notification(let a) = $0, case .notification(let b) = $1 else { return false }
            return a.notification.id < b.notification.id
        }
        return updates + contentUpdates
    }
}
