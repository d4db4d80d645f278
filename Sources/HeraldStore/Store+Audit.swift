import HeraldEvents
import HeraldProjection

extension Store {
    /// One line of an audit: the record (seq, time, source) and what it did to the target.
    public struct AuditLine: Hashable, Sendable {
        public var record: LogRecord
        public var effects: [AuditTrail.Effect]
    }

    /// The timeline of one object, notification or group of `account`: every event that
    /// touched it, in log order, with its effects explained (`herald audit`).
    ///
    /// Replays the account's whole history with lifecycle changes recorded; other accounts'
    /// records are checked but not decoded, since accounts never influence each other. When
    /// compaction dropped history without an archive (``HistoryBounds/droppedThrough``), the
    /// replay starts from the snapshot at the compaction base, as every other replay does, so
    /// ids and groups are the real ones; the events before it cannot be explained, but the trail
    /// starts from the snapshot's state of the account, so what later events do to the
    /// notifications and groups it held is (one out of view there that comes into view
    /// later is `shownAfterBase`, not `shownAgain`: the log cannot tell whether it was
    /// shown before).
    ///
    /// Throws ``StoreError/Code/unknownAccount`` when no event of that history
    /// names `account` (a mistyped or purged account), and
    /// ``StoreError/Code/unknownChat`` when none of the account's names
    /// the target's chat, so that an empty timeline always means a chat or an account whose
    /// events never touched the target.
    public func audit(account: String, target: AuditTrail.Target) throws -> [AuditLine] {
        try auditReport(account: account, target: target).lines
    }

    /// An audit with what it needs to answer the question: the timeline, the target as it
    /// stood where the history starts (when it starts at a snapshot), and the notification
    /// and group ids the account ever had, to tell an unknown id from an untouched one.
    public struct AuditReport: Hashable, Sendable {
        /// The events that touched the target, in log order.
        public var lines: [AuditLine]
        /// The seq of the snapshot the history starts from (0: it starts at seq 1).
        public var baseSeq: UInt64
        /// The target as it stood in that snapshot (`AuditTrail.atBase`).
        public var atBase: [AuditTrail.Effect]
        /// Notification ids the account gave out: every id below `nextNotificationId` at the
        /// base (ids are never reused), and those created since, ascending.
        package var notificationIdsBeforeBase: Int64
        package var notificationIds: [Int64]
        /// Group ids likewise.
        package var groupIdsBeforeBase: Int64
        package var groupIds: [Int64]
        /// Whether ``lines`` holds every event that named the target without changing it
        /// (effect `noEffect`), so that they can be counted; false when the audit index
        /// answered, which reads only the events from the target's first change to its last.
        public var listsEveryUnchangedEvent = true

        /// Whether the account ever had notification `id`.
        public func hasNotification(_ id: Int64) -> Bool {
            id > 0 && (id < notificationIdsBeforeBase || notificationIds.contains(id))
        }

        /// Whether the account ever had group `id`.
        public func hasGroup(_ id: Int64) -> Bool {
            id > 0 && (id < groupIdsBeforeBase || groupIds.contains(id))
        }

        /// Up to `count` known ids nearest `id`, ascending, from `1..<before` and `ids`.
        package static func nearest(_ id: Int64, before: Int64, ids: [Int64], count: Int = 8) -> [Int64] {
            var candidates = Set(ids.sorted { abs($0 - id) < abs($1 - id) }.prefix(count))
            if before > 1 {
                let low = max(1, min(id, before - 1) - Int64(count / 2))
                for candidate in low..<min(before, low + Int64(count)) { candidates.insert(candidate) }
            }
            return candidates.sorted { abs($0 - id) != abs($1 - id) ? abs($0 - id) < abs($1 - id) : $0 < $1 }.prefix(count).sorted()
        }
    }

    /// The audit of ``audit(account:target:)`` with its context (``AuditReport``).
    ///
    /// With `listingUnchanged` false, only the events that changed the target are needed, so
    /// the audit index (``AuditIndex/catchUp(starting:)``) may answer: the account's state is restored
    /// from the newest snapshot before the target's first change and only the account's
    /// events up to its last change are replayed, which costs about the events of that
    /// window instead of the whole history. The lines that changed the target are those of the
    /// full replay; events that only named it may be missing
    /// (``AuditReport/listsEveryUnchangedEvent`` is then false). When the index cannot answer
    /// (none, behind the log, damaged, or no entry for the target: an unknown id, an object
    /// never received), the history is replayed as with `listingUnchanged`.
    public func auditReport(account: String, target: AuditTrail.Target, listingUnchanged: Bool) throws -> AuditReport {
        if !listingUnchanged, let report = try indexedAuditReport(account: account, target: target) { return report }
        return try auditReport(account: account, target: target)
    }

    /// The audit of ``audit(account:target:)`` with its context (``AuditReport``), from a
    /// replay of the history: every event that named the target is listed.
    public func auditReport(account: String, target: AuditTrail.Target) throws -> AuditReport {
        let (start, initial) = try replayStart(through: .max, configuration: .init(recordsChanges: true), fromSnapshot: false)
        var fold = AuditFold(account: account, target: target, startingFrom: initial, at: start)
        var named = initial.accounts.contains { $0.isSameName(as: account) }
        let chat: String? = if case .object(let chat, _) = target { chat } else { nil }
        var chatNamed = chat.map { chat in initial.account(account)?.chats.contains { $0.chat.isSameName(as: chat) } ?? false } ?? true
        try self.history.forEach(from: start + 1, account: account) { record in
            named = true
            if !chatNamed, let named = record.event.chat, let chat, named.isSameName(as: chat) { chatNamed = true }
            fold.add(record)
            return true
        }
        guard named else { throw StoreError.unknownAccount(path: path, account: account) }
        guard chatNamed else {
            let chats = fold.projection.account(account)?.chats.map(\.chat) ?? []
            throw StoreError.unknownChat(path: path, account: account, chat: chat!, chats: chats)
        }
        return fold.report(baseSeq: start, listsEveryUnchangedEvent: true)
    }
}

/// An audit's replay: each record applied with its lifecycle changes and fed to the trail,
/// the notification and group ids the account gave out collected, and the records of the
/// trail's entries kept for its lines. Shared by the full replay and the indexed one.
struct AuditFold {
    private(set) var projection: Projection
    private(set) var trail: AuditTrail
    /// The account's state where the fold starts, for the ids given out before it.
    private let state: AccountState?
    private var notificationIds = Set<Int64>()
    private var groupIds = Set<Int64>()
    private var records: [UInt64: LogRecord] = [:]

    /// Starts from `projection`, the state after `seq` (0: the empty state).
    init(account: String, target: AuditTrail.Target, startingFrom projection: Projection, at seq: UInt64) {
        self.projection = projection
        trail = AuditTrail(account: account, target: target, startingFrom: projection, at: seq)
        state = projection.account(account)
    }

    /// Applies `record` (one of the account's, in log order) and feeds the trail.
    mutating func add(_ record: LogRecord) {
        let outcome = projection.apply(record.event, seq: record.seq)
        for case .created(let notificationId, let groupId, _, _, _) in outcome.changes {
            notificationIds.insert(notificationId)
            groupIds.insert(groupId)
        }
        let before = trail.entries.count
        trail.record(seq: record.seq, event: record.event, outcome: outcome)
        if trail.entries.count > before { records[record.seq] = record }
    }

    /// The report of what was folded, the history starting at `baseSeq`.
    func report(baseSeq: UInt64, listsEveryUnchangedEvent: Bool) -> Store.AuditReport {
        Store.AuditReport(
            lines: trail.entries.map { Store.AuditLine(record: records[$0.seq]!, effects: $0.effects) },
            baseSeq: baseSeq, atBase: trail.atBase,
            notificationIdsBeforeBase: state?.nextNotificationId ?? 1, notificationIds: notificationIds.sorted(),
            groupIdsBeforeBase: state?.nextGroupId ?? 1, groupIds: groupIds.sorted(),
            listsEveryUnchangedEvent: listsEveryUnchangedEvent)
    }
}
