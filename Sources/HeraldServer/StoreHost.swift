import HeraldStore
import Logging
import NIOPosix
import Synchronization

/// Owns the open ``Store`` and the threads that call it.
///
/// Every `Store` method but `appliedEvents()` blocks (an append waits for its fsync, reads of
/// the state may wait up to one commit), so handlers never call the store on an event loop or
/// on the cooperative pool: they go through ``run(_:)``, which runs the call on a
/// `NIOThreadPool`. The pool has many threads on purpose: concurrent appends each wait on
/// their own thread and share one commit (the store's group commit).
public final class StoreHost: Sendable {
    /// The store's directory.
    public let path: String
    private let pool: NIOThreadPool
    private let held: Mutex<Store?>
    /// The service tables beside the store (`STORE/serve/`).
    let tables: ServiceTables

    /// Opens the store at `path` (creating it) and starts `threads` threads for its calls.
    public init(path: String, options: Store.Options = Store.Options(), threads: Int = 64) throws {
        self.path = path
        let store = try Store(path: path, options: options)
        tables = try ServiceTables(storePath: path)
        held = Mutex(store)
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `body` with the store on the pool; throws ``ServerError`` `.unavailable` once
    /// the host is closed.
    public func run<Result: Sendable>(_ body: @escaping @Sendable (Store) throws -> Result) async throws -> Result {
        try await pool.runIfActive { [self] in
            guard let store = held.withLock({ $0 }) else { throw ServerError.unavailable("the store is closed") }
            return try body(store)
        }
    }

    /// Runs `body` with the service tables on the pool.
    func tables<Result: Sendable>(_ body: @escaping @Sendable (ServiceTables) throws -> Result) async throws -> Result {
        try await pool.runIfActive { [tables] in try body(tables) }
    }

    /// Replaces the open store for the duration of `body` (for compaction, which needs the
    /// store closed): `body` runs with no store open and returns the one to open next.
    func withStoreClosed<Result: Sendable>(
        _ body: @escaping @Sendable (String) throws -> Result, reopen options: Store.Options
    ) async throws -> Result {
        try await pool.runIfActive { [self] in
            let previous = held.withLock { store -> Store? in
                defer { store = nil }
                return store
            }
            previous?.waitForBackgroundSnapshot()
            // Let go of the store here: the last reference closes it, and the writer lock.
            _ = consume previous
            defer { held.withLock { $0 = try? Store(path: path, options: options) } }
            return try body(path)
        }
    }

    /// Whether a store is open.
    public var isOpen: Bool { held.withLock { $0 != nil } }

    /// Closes the store (after waiting for a background snapshot) and stops the threads.
    public func close() async throws {
        let store = held.withLock { store -> Store? in
            defer { store = nil }
            return store
        }
        store?.waitForBackgroundSnapshot()
        _ = consume store
        try await pool.shutdownGracefully()
    }
}
