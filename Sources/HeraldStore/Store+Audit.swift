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
    /// events are skipped, since accounts never influence each other. When compaction
    /// dropped history without an archive (``historyDroppedThrough()``), the replay starts
    /// from the snapshot at the compaction base, as every other replay does, so ids and
    /// groups are the real ones; the events before it cannot be explained, but the trail
    /// starts from the snapshot's state of the account, so what later events do to the
    /// notifications and groups it held is (one out of view there that comes into view
    /// later is `shownAfterBase`, not `shownAgain`: the log cannot tell whether it was
    /// shown before).
    ///
    /// Throws ``StoreError/unknownAccount(path:account:)`` when no event of that history
    /// names `account` (a mistyped or purged account), and
    /// ``StoreError/unknownChat(path:account:chat:chats:)`` when none of the account's names
    /// the target's chat, so that an empty timeline always means a chat or an account whose
    /// events never touched the target.
    public func audit(account: String, target: AuditTrail.Target) throws -> [AuditLine] {
        let (start, initial) = try replayStart(through: .max, configuration: .init(recordsChanges: true), fromSnapshot: false)
        var projection = initial
        var trail = AuditTrail(account: account, target: target, startingFrom: initial, at: start)
        var records: [UInt64: LogRecord] = [:]
        var named = initial.accounts.contains { $0.isSameName(as: account) }
        let chat: String? = if case .object(let chat, _) = target { chat } else { nil }
        var chatNamed = chat.map { chat in initial.account(account)?.chats.contains { $0.chat.isSameName(as: chat) } ?? false } ?? true
        try forEachRecord(includingArchive: true, from: start + 1) { record in
            guard record.event.account.isSameName(as: account) else { return true }
            named = true
            if !chatNamed, let named = record.event.chat, let chat, named.isSameName(as: chat) { chatNamed = true }
            let outcome = projection.apply(record.event, seq: record.seq)
            let before = trail.entries.count
            trail.record(seq: record.seq, event: record.event, outcome: outcome)
            if trail.entries.count > before { records[record.seq] = record }
            return true
        }
        guard named else { throw StoreError.unknownAccount(path: path, account: account) }
        guard chatNamed else {
            let chats = projection.account(account)?.chats.map(\.chat) ?? []
            throw StoreError.unknownChat(path: path, account: account, chat: chat!, chats: chats)
        }
        return trail.entries.map { AuditLine(record: records[$0.seq]!, effects: $0.effects) }
    }
}
