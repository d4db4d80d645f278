// HeraldProjection owns Herald's projection (SEMANTICS §2–§9): a pure, deterministic state
// machine that folds canonical events into per-account state (chats, unread counts, groups,
// notifications) and reports, for each event, the TDLib-style updates a client needs.
// It performs no I/O and reads no clock; the store around it owns the log and snapshots.
//
// Map of the module:
// - `Projection` (this file): the public entry point, many accounts.
// - `Account*`: one account's state and the rules of SEMANTICS §4–§9.
// - `Chat`, `NotificationGroup`: interned chats and groups holding live notifications.
// - `HeraldNotification`, `Update`, `Change`, `AccountState`: public values.
// - `ReplayBatch`, `PackedNotify`, `Projection+Replay`: replays of a batch, the one input
//   built for speed.
// - `Projection+JSON`, `Projection+Snapshot`, `Projection+Invariants`: aspects.

import HeraldEvents

/// The projection of an event log: every account's state and visible notifications.
///
/// Apply validated events in log order with ``apply(_:seq:)``; each call returns the updates
/// of SEMANTICS §9. Rebuild state without updates with ``replay(_:)`` of a ``ReplayBatch``.
/// The value is pure: equal logs give equal projections, and a projection
/// restored from ``snapshot()`` continues exactly like the original.
public struct Projection: Sendable {
    /// Settings for what-if replays and audits; not part of any account's state.
    public struct Configuration: Sendable, Hashable {
        /// When set, replaces every account's `groupCountMax`, and `options` events cannot change it.
        public var groupCountMaxOverride: Int?
        /// When set, replaces every account's `groupSizeMax`, and `options` events cannot change it.
        public var groupSizeMaxOverride: Int?
        /// When true, ``Projection/apply(_:seq:)`` also reports lifecycle changes (for audits).
        public var recordsChanges: Bool

        /// Creates a configuration; the defaults suit the hot path.
        public init(groupCountMaxOverride: Int? = nil, groupSizeMaxOverride: Int? = nil, recordsChanges: Bool = false) {
            self.groupCountMaxOverride = groupCountMaxOverride
            self.groupSizeMaxOverride = groupSizeMaxOverride
            self.recordsChanges = recordsChanges
        }
    }

    /// The configuration the projection runs with.
    public let configuration: Configuration
    /// The seq of the last applied event; 0 before any.
    public internal(set) var seq: UInt64 = 0
    /// Every account named by an event, by name.
    var accountsByName = AccountTable()
    /// The indexes (in ``accountsByName``) of the accounts whose view ``replay(_:)`` left
    /// stale, each once; see ``settleView()``.
    var staleAccounts: [Int] = []
    /// ``NameInterner`` account ids → indexes in ``accountsByName``, for the interned names of
    /// a ``ReplayBatch``; emptied whenever those indexes change.
    var internedAccounts = InternedIndexes()
    /// Per account (by index in ``accountsByName``), ``NameInterner`` chat ids → indexes of
    /// its chats; an account's is emptied by its `revoke`, all of them when the account
    /// indexes change. May be shorter than ``accountsByName`` (missing ones are empty).
    var internedChats: [InternedIndexes] = []
    /// What the event being applied works with besides the state; empty between events.
    var scratch = EventScratch()

    /// Creates an empty projection (the state of an empty log).
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Applies one validated event with sequence number `seq` and returns its updates.
    ///
    /// `seq` must be greater than ``seq`` (gaps are fine: compaction and purges leave them).
    /// To rebuild state without updates, replay a ``ReplayBatch`` instead (``replay(_:)``).
    public mutating func apply(_ event: Event, seq: UInt64) -> Outcome {
        precondition(seq > self.seq, "events must be applied in increasing seq order")
        if !staleAccounts.isEmpty { settleView() }
        self.seq = seq
        let configuration = self.configuration
        var outcome = Outcome()
        let index = accountIndex(names: .none, name: event.account)
        if index >= internedChats.count { addInternedChats(through: index) }
        accountsByName.modify(at: index, &internedChats[index], &scratch) { account, chatIds, scratch in
            outcome.updates = account.apply(event.payload, chatIds: &chatIds, &scratch)
            if configuration.recordsChanges {
                swap(&outcome.changes, &scratch.changes)
            }
            #if DEBUG
            account.checkInvariants()
            precondition(scratch.isClear, "an event left scratch behind")
            #endif
        }
        return outcome
    }

    /// The index in ``accountsByName`` of an event's account, found by its interned id when
    /// `names` has one the projection has seen, else by `name` (adding the account when new).
    @inline(__always)
    mutating func accountIndex(names: InternedNames, name: @autoclosure () -> String) -> Int {
        var index = internedAccounts.index(of: names.account, token: names.token)
        if index < 0 {
            let configuration = self.configuration
            index = accountsByName.intern(name(), default: { Account(configuration: configuration) })
            if names.token != 0 { internedAccounts.record(index, for: names.account, token: names.token) }
        }
        return index
    }

    /// Makes ``internedChats`` long enough to hold an entry for the account at `index`.
    @inline(never)
    mutating func addInternedChats(through index: Int) {
        internedChats.append(contentsOf: repeatElement(InternedIndexes(), count: index + 1 - internedChats.count))
    }

    /// Replays one event without its updates, as ``replay(_:)`` does each event of a batch:
    /// for the store's reads that stop at a record or skip some (one account's history).
    package mutating func replay(_ event: Event, seq: UInt64) {
        replay(event, seq: seq, names: .none)
    }

    /// ``replay(_:seq:)`` of an event whose account and chat a ``NameInterner`` has interned
    /// (`names`): the account and chat are found by their ids, not by hashing their names.
    /// Ids of an interner the projection has not seen before cost one name lookup each, the
    /// first time.
    mutating func replay(_ event: Event, seq: UInt64, names: InternedNames) {
        precondition(seq > self.seq, "events must be applied in increasing seq order")
        self.seq = seq
        let index = accountIndex(names: names, name: event.account)
        if index >= internedChats.count { addInternedChats(through: index) }
        let becameStale = accountsByName.modify(at: index, &internedChats[index], &scratch) { account, chatIds, scratch in
            account.replay(event.payload, names: names, chatIds: &chatIds, &scratch)
        }
        if becameStale { staleAccounts.append(index) }
    }

    /// Brings every account's view (candidate and visible groups) up to date after
    /// ``replay(_:)``. Optional: readers of a projection with a stale view see it up to date
    /// anyway, worked out on a copy; a rebuild calls it once, after its last batch.
    public mutating func settleView() {
        for index in staleAccounts { accountsByName.modify(at: index, &scratch) { $0.settleView(&$1) } }
        staleAccounts.removeAll()
    }

    /// This projection with its view up to date: itself, or a settled copy.
    var settled: Projection {
        guard !staleAccounts.isEmpty else { return self }
        var copy = self
        copy.settleView()
        return copy
    }

    /// Every account named by an event (and not removed), in ascending byte order.
    public var accounts: [String] {
        accountsByName.keys.sorted(by: Projection.byteOrder)
    }

    /// A read-only view of account `name`, or `nil` when no event named it.
    public func account(_ name: String) -> AccountState? {
        guard var account = accountsByName[name] else { return nil }
        var scratch = EventScratch()
        account.settleView(&scratch)
        return AccountState(name: name, account)
    }

    /// The visible groups of account `name` in visible order, each with its visible
    /// notifications (TDLib's `updateActiveNotifications`); empty for an unknown account.
    public func activeNotifications(account name: String) -> [VisibleGroup] {
        guard var account = accountsByName[name] else { return [] }
        var scratch = EventScratch()
        account.settleView(&scratch)
        return account.visibleGroups
    }

    /// Records that the history through `seq` has been read although its last events were not
    /// applied here: a replay of one account skips the others' events (accounts never
    /// influence each other), and its ``seq`` must still be the history's. Never moves back.
    public mutating func advance(to seq: UInt64) {
        self.seq = max(self.seq, seq)
    }

    /// Forgets account `name` entirely (privacy purge); the store replays without its events.
    public mutating func removeAccount(_ name: String) {
        settleView()  // removing renumbers the accounts
        accountsByName[name] = nil
        internedAccounts = InternedIndexes()
        internedChats = []
    }

    /// Whether `lhs` comes before `rhs` in byte (UTF-8) order, the order of every listing.
    @inlinable
    public static func byteOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}

extension Projection: Equatable {
    /// Equal when the configuration, the seq and every account's state are (views compared
    /// up to date, however much of them replays left to settle).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.configuration == rhs.configuration && lhs.seq == rhs.seq
            && lhs.comparable.accountsByName == rhs.comparable.accountsByName
    }

    /// This projection with every view up to date and no stale candidate keys: what is left
    /// of its accounts depends on their state alone, so the derived equality of accounts
    /// compares states.
    private var comparable: Projection {
        var copy = settled
        for index in copy.accountsByName.states.indices {
            copy.accountsByName.modify(at: index) { $0.dropAllStaleCandidates() }
        }
        return copy
    }
}
