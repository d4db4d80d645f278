extension Projection {
    /// The live notifications (active or dismissed; cleared ones are not kept) over all
    /// accounts: the state that memory budgets are measured against. O(accounts).
    public var liveNotificationCount: Int {
        accountsByName.values.reduce(0) { $0 + $1.live.count }
    }
}
