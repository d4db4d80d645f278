import Foundation
import Logging

// The maintenance operations as they were before ``StoreMaintenance``: static members of
// ``Store`` taking the store's directory, and the online backup of an open store. Each
// forwards to ``StoreMaintenance``.

extension Store {
    /// Compacts the store in `path`; see ``StoreMaintenance/compact(through:discardingHistory:dryRun:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path:options:).compact(through:discardingHistory:dryRun:)")
    @discardableResult
    public static func compact(
        path: String, through seq: UInt64? = nil, discardingHistory: Bool = false, dryRun: Bool = false,
        options: Options = Options()
    ) throws -> CompactionReport {
        try StoreMaintenance(path: path, options: options).compact(through: seq, discardingHistory: discardingHistory, dryRun: dryRun)
    }

    /// Compacts the store in `path`, suspending meanwhile; see
    /// ``StoreMaintenance/compact(through:discardingHistory:dryRun:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path:options:).compact(through:discardingHistory:dryRun:)")
    @discardableResult
    public static func compact(
        path: String, through seq: UInt64? = nil, discardingHistory: Bool = false, dryRun: Bool = false,
        options: Options = Options()
    ) async throws -> CompactionReport {
        try await StoreMaintenance(path: path, options: options)
            .compact(through: seq, discardingHistory: discardingHistory, dryRun: dryRun)
    }

    /// Purges `account` from the store in `path`; see ``StoreMaintenance/purge(account:dryRun:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path:options:).purge(account:dryRun:)")
    @discardableResult
    public static func purge(path: String, account: String, dryRun: Bool = false, options: Options = Options()) throws -> PurgeReport {
        try StoreMaintenance(path: path, options: options).purge(account: account, dryRun: dryRun)
    }

    /// Expires archived history of the store in `path`; see
    /// ``StoreMaintenance/expireArchive(retention:now:dryRun:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path:options:).expireArchive(retention:now:dryRun:)")
    @discardableResult
    public static func expireArchive(
        path: String, retention: ArchiveRetention, now: Int64 = Int64(Date().timeIntervalSince1970 * 1000),
        dryRun: Bool = false, options: Options = Options()
    ) throws -> RetentionReport {
        try StoreMaintenance(path: path, options: options).expireArchive(retention: retention, now: now, dryRun: dryRun)
    }

    /// Salvages the damaged store in `damaged` into `destination`; see ``StoreMaintenance/salvage(to:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path: damaged, options:).salvage(to:)")
    public static func salvage(from damaged: String, to destination: String, options: Options = Options()) throws -> SalvageReport {
        try StoreMaintenance(path: damaged, options: options).salvage(to: destination)
    }

    /// Removes a stored key from the store in `path`; see ``StoreMaintenance/removeKey(id:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path:options:).removeKey(id:)")
    public static func removeKey(path: String, id: Int64, options: Options = Options()) throws -> Bool {
        try StoreMaintenance(path: path, options: options).removeKey(id: id)
    }

    /// Backs up the store in `storePath`; see ``StoreMaintenance/backup(to:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path: storePath, options:).backup(to:), the logger in the options")
    public static func backup(storePath: String, to destination: String, logger: Logger = Options().logger) throws -> BackupReport {
        try StoreMaintenance(path: storePath, options: Options(logger: logger)).backup(to: destination)
    }

    /// Backs up this store while it is in use; see ``StoreMaintenance/backup(to:)``.
    @available(*, deprecated, message: "use StoreMaintenance(path: store.path, options: store.options).backup(to:)")
    public func backup(to destination: String) throws -> BackupReport {
        try StoreMaintenance(path: path, options: options).backup(to: destination)
    }
}

extension Store.Options {
    /// The default options with `logger`.
    fileprivate init(logger: Logger) {
        self.init()
        self.logger = logger
    }
}
