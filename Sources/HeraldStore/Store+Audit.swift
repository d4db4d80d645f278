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
        try auditReport(account: account, target: target, listingUnchanged: true).lines
    }

    /// An audit with what it needs to answer the question: the timeline, the target as it
    /// stood where the history starts (when it starts at a snapshot), and, for a notification
    /// or group id the account never had, the ids nearest it that it had.
    public struct AuditReport: Hashable, Sendable {
        /// The events that touched the target, in log order: those that changed it, and with
        /// `listingUnchanged` those that only named it too.
        public var lines: [AuditLine]
        /// The seq of the snapshot the history starts from (0: it starts at seq 1).
        public var baseSeq: UInt64
        /// The target as it stood in that snapshot (`AuditTrail.atBase`).
        public var atBase: [AuditTrail.Effect]
        /// When the target is a notification or group id the account never had: up to 8 ids
        /// of that kind it had, nearest the target's, ascending (maybe none). `nil` otherwise.
        public var nearestKnownIds: [Int64]?

        /// Whether the target is a notification or group id the account never had (ids are
        /// never reused, so an unknown id is not merely an untouched one).
        public var isUnknownId: Bool { nearestKnownIds != nil }

        /// Up to `count` known ids nearest `id`, ascending, from `1..<before` and `ids`.
        static func nearest(_ id: Int64, before: Int64, ids: [Int64], count: Int = 8) -> [Int64] {
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
    /// With `listingUnchanged`, every event that named the target is listed, from a replay of
    /// the account's history. Without it, only the events that changed the target are, and
    /// the audit index (``AuditIndex/catchUp(starting:)``) may answer instead of the replay:
    /// the account's state is restored from the newest snapshot before the target's first
    /// change and only the account's events up to its last change are read, which costs
    /// about the events of that window instead of the whole history. Either way the report
    /// is the same: the index is only a shortcut, taken when it covers the log, is sound and
    /// has an entry for the target, and ``Options/usesAuditIndex`` switches it off.
    public func auditReport(account: String, target: AuditTrail.Target, listingUnchanged: Bool) throws -> AuditReport {
        if !listingUnchanged, let report = try auditIndex.report(account: account, target: target) { return report }
        return try replayedAuditReport(account: account, target: target, listingUnchanged: listingUnchanged)
    }

    /// ``auditReport(account:target:listingUnchanged:)`` from a replay of the history.
    package func replayedAuditReport(account: String, target: AuditTrail.Target, listingUnchanged: Bool) throws -> AuditReport {
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
        return fold.report(baseSeq: start, listingUnchanged: listingUnchanged)
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

    /// The report of what was folded, the history starting at `baseSeq`: the lines that
    /// changed the target (all of them with `listingUnchanged`), and the ids nearest an
    /// unknown target id among those the account gave out.
    func report(baseSeq: UInt64, listingUnchanged: Bool) -> Store.AuditReport {
        let lines = trail.entries.map { Store.AuditLine(record: records[$0.seq]!, effects: $0.effects) }
        func nearest(_ id: Int64, before: Int64, _ ids: Set<Int64>) -> [Int64]? {
            id > 0 && (id < before || ids.contains(id)) ? nil : Store.AuditReport.nearest(id, before: before, ids: ids.sorted())
        }
        let nearestKnownIds: [Int64]? = switch trail.target {
        case .notification(let id): nearest(id, before: state?.nextNotificationId ?? 1, notificationIds)
        case .group(let id): nearest(id, before: state?.nextGroupId ?? 1, groupIds)
        case .object: nil
        }
        return Store.AuditReport(
            lines: listingUnchanged ? lines : lines.filter(\.changesTarget), baseSeq: baseSeq, atBase: trail.atBase,
            nearestKnownIds: nearestKnownIds)
    }
}
