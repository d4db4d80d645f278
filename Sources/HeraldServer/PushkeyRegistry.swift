/// The Matrix pushkeys registered to accounts (`STORE/serve/`, table `pushkeys`), for tools:
/// `herald serve pushkeys`. A running server reads the table per request, so a pushkey
/// registered here (even from another process) counts at once. Every method blocks.
public struct PushkeyRegistry: Sendable {
    private let tables: ServiceTables

    /// Opens the registry of the store at `storePath` (creating `STORE/serve/`).
    public init(storePath: String) throws {
        tables = try ServiceTables(storePath: storePath)
    }

    /// Registers (or moves) `pushkey` to `account`.
    public func register(pushkey: String, account: String, appId: String? = nil) throws {
        precondition(!pushkey.isEmpty && !account.isEmpty, "pushkey and account must not be empty")
        try tables.put(.pushkeys, pushkey, Registration(account: account, appId: appId))
    }

    /// Every registration: pushkey, account and app id.
    public func all() throws -> [(pushkey: String, account: String, appId: String?)] {
        try tables.all(.pushkeys, as: Registration.self).map { ($0.key, $0.value.account, $0.value.appId) }
    }

    /// Removes `pushkey`; returns whether it was registered.
    @discardableResult
    public func remove(pushkey: String) throws -> Bool {
        try tables.remove(.pushkeys, pushkey)
    }
}
