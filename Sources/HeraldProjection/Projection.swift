// HeraldProjection owns Herald's projection (SEMANTICS §2–§9): a pure, deterministic state
// machine that folds canonical events into per-account state (chats, unread counts, groups,
// notifications) and reports, for each event, the TDLib-style updates a client needs.
// It performs no I/O and reads no clock; the store around it owns the log and snapshots.
//
// Map of the module:
// - `Projection` (this file): the public entry point, many accounts.
// - `Account*`: one account's state and the rules of SEMANTICS §4–§9.
// - `Chat`, `NotificationGroup`: interned chats and groups holding live notifications.
// - `Notification`, `Update`, `Change`, `AccountState`: public values.
// - `Projection+JSON`, `Projection+Snapshot`, `Projection+Invariants`: aspects.

import HeraldEvents

/// The projection of an event log: every account's state and visible notifications.
///
/// Apply validated events in log order with ``apply(_:seq:)``; each call returns the updates
/// of SEMANTICS §9. The value is pure: equal logs give equal projections, and a projection
/// restored from ``snapshot()`` continues exactly like the original.
public struct Projection: Sendable, Equatable {
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

    /// Creates an empty projection (the state of an empty log).
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Applies one validated event with sequence number `seq` and returns its updates.
    ///
    /// `seq` must be greater than ``seq`` (gaps are fine: compaction and purges leave them).
    public mutating func apply(_ event: Event, seq: UInt64) -> Outcome {
        precondition(seq > self.seq, "events must be applied in increasing seq order")
        self.seq = seq
        let configuration = self.configuration
        var outcome = Outcome()
        withAccount(event.account, configuration: configuration) { account in
            outcome.updates = account.apply(event.payload)
            if configuration.recordsChanges {
                swap(&outcome.changes, &account.changes)
            }
            #if DEBUG
            account.checkInvariants()
            #endif
        }
        return outcome
    }

    /// Applies one validated event without computing its updates or changes: the state ends
    /// exactly as with ``apply(_:seq:)``, faster. For recovery, rebuilds and what-if replays,
    /// where only the final state matters.
    public mutating func replay(_ event: Event, seq: UInt64) {
        precondition(seq > self.seq, "events must be applied in increasing seq order")
        self.seq = seq
        let configuration = self.configuration
        withAccount(event.account, configuration: configuration) { account in
            _ = account.apply(event.payload, computeUpdates: false)
            if configuration.recordsChanges { account.changes.removeAll() }
            #if DEBUG
            account.checkInvariants()
            #endif
        }
    }

    @inline(__always)
    private mutating func withAccount(
        _ name: String, configuration: Configuration, _ body: (inout Account) -> Void
    ) {
        accountsByName.modify(name, default: { Account(configuration: configuration) }, body)
    }

    /// Every account named by an event (and not removed), in ascending byte order.
    public var accounts: [String] {
        accountsByName.keys.sorted(by: Projection.byteOrder)
    }

    /// A read-only view of account `name`, or `nil` when no event named it.
    public func account(_ name: String) -> AccountState? {
        accountsByName[name].map { AccountState(name: name, $0) }
    }

    /// The visible groups of account `name` in visible order, each with its visible
    /// notifications (TDLib's `updateActiveNotifications`); empty for an unknown account.
    public func activeNotifications(account name: String) -> [VisibleGroup] {
        accountsByName[name]?.visibleGroups ?? []
    }

    /// Forgets account `name` entirely (privacy purge); the store replays without its events.
    public mutating func removeAccount(_ name: String) {
        accountsByName[name] = nil
    }

    /// Whether `lhs` comes before `rhs` in byte (UTF-8) order, the order of every listing.
    @inlinable
    public static func byteOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
