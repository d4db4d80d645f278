import Foundation
import HeraldEvents
import HeraldReplication
import HeraldStore
import Logging
import NIOPosix
import Synchronization

/// Owns the open ``Store`` and the threads that call it.
///
/// Every `Store` method but `appliedEvents()` blocks (an append waits for its fsync, reads of
/// the state may wait up to one commit), so handlers never call the store on an event loop or
/// on the cooperative pool. Appends go through ``append(_:)``, the store's suspending bulk
/// append (the store commits concurrent callers together, and they wait suspended);
/// other calls go through ``run(_:)``, on a `NIOThreadPool`. A ``StoreGate`` lets compaction
/// and close take the store to themselves; an ``AppendFence`` refuses the appends of accounts
/// being moved away.
public final class StoreHost: Sendable {
    /// The store's directory.
    public let path: String
    private let pool: NIOThreadPool
    private let slot: StoreSlot
    private var gate: StoreGate { slot.gate }
    private let options: Store.Options
    /// The service tables beside the store (`STORE/serve/`).
    let tables: ServiceTables
    /// The accounts whose appends are refused, and the appends under way.
    private let fence = AppendFence()

    /// Opens the store at `path` (creating it) and starts `threads` threads for its calls.
    public init(path: String, options: Store.Options = Store.Options(), threads: Int = 16) throws {
        self.path = path
        let store = try Store(path: path, options: options)
        tables = try ServiceTables(storePath: path, replication: options.replication as? ReplicatedLog)
        let slot = StoreSlot(store)
        self.slot = slot
        self.options = options
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    /// Runs `body` with the store on the pool; throws ``ServerError`` `.unavailable` once
    /// the host is closed. Waits while a compaction has the store closed.
    public func run<Result: Sendable>(_ body: @escaping @Sendable (Store) throws -> Result) async throws -> Result {
        try await pool.runIfActive { [self] in
            gate.enterShared()
            defer { gate.leaveShared() }
            guard let store = slot.store.withLock({ $0 }) else { throw ServerError.unavailable("the store is closed") }
            return try body(store)
        }
    }

    /// Appends `events` (validated) in the store's next commit; returns their seqs once
    /// durable. Suspends meanwhile; only while a compaction has the store closed does it wait
    /// on the pool for the gate.
    public func append(_ events: [(Event, Source)]) async throws -> ClosedRange<UInt64>? {
        guard !events.isEmpty else { return nil }
        let ticket = try fence.enter(events)
        defer { fence.leave(ticket) }
        if !gate.tryEnterShared() {
            try await pool.runIfActive { [gate] in gate.enterShared() }
        }
        defer { gate.leaveShared() }
        guard let store = slot.store.withLock({ $0 }) else { throw ServerError.unavailable("the store is closed") }
        return try await store.appendBatchSuspending(events)
    }

    /// Refuses appends of `accounts`' events from now on (503), and returns once every append
    /// queued before has finished: from then on the store holds every event of theirs it
    /// will acknowledge. Waits on the pool, outside the store gate.
    func setFenced(_ accounts: Set<String>) async throws {
        try await pool.runIfActive { [fence] in fence.setFenced(accounts) }
    }

    /// ``setFenced(_:)`` at start, before any append is queued (so nothing waits).
    func setFencedNow(_ accounts: Set<String>) { fence.setFenced(accounts) }

    /// Runs `body` with the service tables on the pool.
    func tables<Result: Sendable>(_ body: @escaping @Sendable (ServiceTables) throws -> Result) async throws -> Result {
        try await pool.runIfActive { [tables] in try body(tables) }
    }

    /// Runs `body` with the store closed (compaction needs the writer lock and the files to
    /// itself), then opens it again. Calls arriving meanwhile wait; update streams end (the
    /// store they follow is released) and their clients resume by `Last-Event-ID`.
    func withStoreClosed<Result: Sendable>(_ body: @escaping @Sendable (String) throws -> Result) async throws -> Result {
        try await exclusively { [self] in
            releaseStore()
            let result = Swift.Result { try body(path) }
            do {
                let reopened = try Store(path: path, options: options)
                slot.store.withLock { $0 = reopened }
            } catch {
                options.logger.critical("reopening the store failed", metadata: ["error": "\(error)"])
            }
            return try result.get()
        }
    }

    /// Runs `body` on a thread of its own with the store to itself (the calls in flight
    /// finished, later ones waiting at the gate), and returns its result. The pool's threads
    /// may all be waiting at the gate, so it cannot run on them; a task's cancellation does not
    /// reach it, and it never waits for the cooperative pool.
    private func exclusively<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [gate] in
                gate.enterExclusive()
                let result = Swift.Result { try body() }
                gate.leaveExclusive()
                continuation.resume(with: result)
            }
            thread.name = "herald.exclusive"
            thread.start()
        }
    }

    /// Takes the store out of its slot and lets it go (the last reference closes it and frees
    /// the writer lock), after its background snapshot.
    private func releaseStore() {
        let store = slot.store.withLock { store -> Store? in
            defer { store = nil }
            return store
        }
        store?.snapshots.waitUntilIdle()
    }

    /// Whether a store is open.
    public var isOpen: Bool { slot.store.withLock { $0 != nil } }

    /// The open store, if any (compaction replaces it).
    var currentStore: Store? { slot.store.withLock { $0 } }

    /// Closes the store and stops the threads at once: a start that failed after the open,
    /// before any call.
    func closeNow() throws {
        fence.stop()
        releaseStore()
        try pool.syncShutdownGracefully()
    }

    /// Takes the store for good once the calls in flight have finished, runs `last` with it
    /// (the final snapshot), closes it (after its background snapshot) and stops the threads.
    ///
    /// Not cancellable, so that a cancelled server still closes its store (see
    /// ``exclusively(_:)``). Calls arriving later throw ``ServerError`` `.unavailable`.
    public func close(after last: @escaping @Sendable (Store) -> Void = { _ in }) async {
        fence.stop()
        _ = try? await exclusively { [self] in
            if let store = slot.store.withLock({ $0 }) { last(store) }
            releaseStore()
        }
        do {
            try await pool.shutdownGracefully()
        } catch {
            options.logger.error("stopping the store's threads failed", metadata: ["error": "\(error)"])
        }
    }
}

/// Many store calls at once, or one caller with the store to itself (compaction, close); a
/// waiting exclusive caller goes before new shared ones, so a steady load cannot starve it.
/// Blocking: used on the pool's threads and the compaction thread only.
final class StoreGate: @unchecked Sendable {
    // @unchecked: `readers`, `writing` and `writersWaiting` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var readers = 0
    private var writing = false
    private var writersWaiting = 0

    func enterShared() {
        condition.lock()
        while writing || writersWaiting > 0 { condition.wait() }
        readers += 1
        condition.unlock()
    }

    /// Enters as ``enterShared()`` does when that would not wait; returns whether it entered.
    func tryEnterShared() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !writing && writersWaiting == 0 else { return false }
        readers += 1
        return true
    }

    func leaveShared() {
        condition.lock()
        readers -= 1
        if readers == 0 { condition.broadcast() }
        condition.unlock()
    }

    func enterExclusive() {
        condition.lock()
        writersWaiting += 1
        while writing || readers > 0 { condition.wait() }
        writersWaiting -= 1
        writing = true
        condition.unlock()
    }

    func leaveExclusive() {
        condition.lock()
        writing = false
        condition.broadcast()
        condition.unlock()
    }
}

/// The open store (none while compacting or once closed) and the gate around it.
final class StoreSlot: Sendable {
    let store: Mutex<Store?>
    let gate = StoreGate()

    init(_ store: Store) { self.store = Mutex(store) }
}

/// Which accounts' appends are refused (503: being moved to, or moved to, another instance),
/// and which appends are under way, so that fencing can wait for those that started before.
final class AppendFence: @unchecked Sendable {
    // @unchecked: every field is only touched with `condition` locked.
    private let condition = NSCondition()
    private var fenced: Set<String> = []
    private var stopped = false
    /// The ticket the next append gets, and the tickets of appends under way.
    private var nextTicket: UInt64 = 0
    private var unfinished: Set<UInt64> = []

    /// Admits an append of `events` and returns its ticket, or throws 503 when one of them
    /// is fenced or the host is closing.
    func enter(_ events: [(Event, Source)]) throws -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        if stopped { throw ServerError.unavailable("the store is closing") }
        if !fenced.isEmpty, let event = events.first(where: { fenced.contains($0.0.account) }) {
            throw Self.fencedError(event.0.account)
        }
        defer { nextTicket += 1 }
        unfinished.insert(nextTicket)
        return nextTicket
    }

    /// The append of `ticket` committed or failed.
    func leave(_ ticket: UInt64) {
        condition.lock()
        unfinished.remove(ticket)
        condition.broadcast()
        condition.unlock()
    }

    /// Refuses appends of `accounts`' events from now on, then waits (blocking) until every
    /// append admitted before has committed or failed: once it returns, the store holds every
    /// event of theirs it will ever acknowledge, until ``setFenced(_:)`` lifts the fence.
    func setFenced(_ accounts: Set<String>) {
        condition.lock()
        let before = accounts.subtracting(fenced).isEmpty ? 0 : nextTicket
        fenced = accounts
        while let oldest = unfinished.min(), oldest < before { condition.wait() }
        condition.unlock()
    }

    /// Refuses every later append (503).
    func stop() {
        condition.lock()
        stopped = true
        condition.unlock()
    }

    /// 503 with `Retry-After`: a retry through the router reaches the account's new instance.
    static func fencedError(_ account: String) -> ServerError {
        var error = ServerError(
            .serviceUnavailable, field: "account",
            "account \(account) is moving (or has moved) to another instance; retry, and the router sends it there")
        error.headers[.retryAfter] = "1"
        return error
    }
}
