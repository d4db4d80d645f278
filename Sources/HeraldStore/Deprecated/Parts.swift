// The names `Store`'s keys, quarantine, audit index and snapshots had before they became
// types of their own (``Keyring``, ``Quarantine``, ``AuditIndex``, ``Snapshots``): each
// forwards to its replacement, so that code written against them still compiles.

extension Store {
    @available(*, deprecated, renamed: "keyring.add(_:)")
    public func addKey(_ key: StoredKey) throws { try keyring.add(key) }

    @available(*, deprecated, renamed: "keyring.add(_:rebind:)")
    @discardableResult
    public func addKey(_ key: StoredKey, rebind: Bool) throws -> Bool { try keyring.add(key, rebind: rebind) }

    @available(*, deprecated, renamed: "keyring.all()")
    public func keys() throws -> [StoredKey] { try keyring.all() }

    @available(*, deprecated, renamed: "keyring.remove(id:)")
    @discardableResult
    public func removeKey(id: Int64) throws -> Bool { try keyring.remove(id: id) }

    @available(*, deprecated, renamed: "quarantine.add(_:)")
    @discardableResult
    public func quarantine(_ entries: [QuarantinedPayload]) throws -> [UInt64] { try quarantine.add(entries) }

    @available(*, deprecated, renamed: "quarantine.addWithinLimit(_:)")
    public func quarantineWithinLimit(_ entries: [QuarantinedPayload]) throws -> (ids: [UInt64], dropped: Int) {
        try quarantine.addWithinLimit(entries)
    }

    @available(*, deprecated, renamed: "quarantine.all()")
    public func quarantined() throws -> [QuarantinedPayload] { try quarantine.all() }

    @available(*, deprecated, renamed: "quarantine.remove(id:)")
    @discardableResult
    public func removeQuarantined(id: UInt64) throws -> Bool { try quarantine.remove(id: id) }

    @available(*, deprecated, renamed: "auditIndex.through()")
    public func auditIndexThrough() throws -> UInt64 { try auditIndex.through() }

    @available(*, deprecated, renamed: "auditIndex.catchUp(starting:)")
    @discardableResult
    public func catchUpAuditIndex(starting: Bool = false) throws -> UInt64 { try auditIndex.catchUp(starting: starting) }

    @available(*, deprecated, renamed: "auditIndex.statistics()")
    public func auditIndexStatistics() throws -> AuditIndex.Statistics { try auditIndex.statistics() }

    @available(*, deprecated, renamed: "auditIndex.drop()")
    public func dropAuditIndex() throws { try auditIndex.drop() }

    @available(*, deprecated, renamed: "AuditIndex.Statistics")
    public typealias AuditIndexStatistics = AuditIndex.Statistics

    @available(*, deprecated, renamed: "snapshots.waitUntilIdle()")
    public func waitForBackgroundSnapshot() { snapshots.waitUntilIdle() }

    @available(*, deprecated, renamed: "snapshots.seqs()")
    public func snapshotSeqs() throws -> [UInt64] { try snapshots.seqs() }
}
