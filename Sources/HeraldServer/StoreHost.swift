import Foundation
import HeraldEvents
import HeraldStore
import Logging
import NIOPosix
import Synchronization

/// Owns the open ``Store`` and the threads that call it.
///
/// Every `Store` method but `appliedEvents()` blocks (an append waits for its fsync, reads of
/// the state may wait up to one commit), so handlers never call the store on an event loop or
/// on the cooperative pool. Appends go through ``append(_:)``, a ``CommitQueue`` whose few
/// threads each commit everything waiting; other calls go through ``run(_:)``, on a
/// `NIOThreadPool`. A ``StoreGate`` lets compaction and close take the store to themselves.
public final class StoreHost: Sendable {
    /// The store's directory.
    public let path: String
    private let pool: NIOThreadPool
    private let slot: StoreSlot
    private var gate: StoreGate { slot.gate }
    private let options: Store.Options
    /// The service tables beside the store (`STORE/serve/`).
    let tables: ServiceTables
    /// Where appends wait for their group commit.
    private let queue: CommitQueue

    /// Opens the store at `path` (creating it) and starts `threads` threads for its calls.
    public init(path: String, options: Store.Options = Store.Options(), threads: Int = 16, committers: Int = 4) throws {
        self.path = path
        let store = try Store(path: path, options: options)
        tables = try ServiceTables(storePath: path)
        let slot = StoreSlot(store)
        self.slot = slot
        self.options = options
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        queue = CommitQueue(threads: committers) { events in
            slot.gate.enterShared()
            defer { slot.gate.leaveShared() }
            guard let store = slot.store.withLock({ $0 }) else { throw ServerError.unavailable("the store is closed") }
            return try store.appendBatch(events)
        }
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

    /// Appends `events` (validated) in the next group commit; returns their seqs once durable.
    public func append(_ events: [(Event, Source)]) async throws -> ClosedRange<UInt64>? {
        try await queue.append(events)
    }

    /// Refuses appends of `accounts`' events from now on (503), and returns once every append
    /// queued before has finished: from then on the store holds every event of theirs it
    /// will acknowledge. Waits on the pool, outside the store gate.
    func setFenced(_ accounts: Set<String>) async throws {
        try await pool.runIfActive { [queue] in queue.setFenced(accounts) }
    }

    /// ``setFenced(_:)`` at start, before any append is queued (so nothing waits).
    func setFencedNow(_ accounts: Set<String>) { queue.setFenced(accounts) }

    /// Runs `body` with the service tables on the pool.
    func tables<Result: Sendable>(_ body: @escaping @Sendable (ServiceTables) throws -> Result) async throws -> Result {
        try await pool.runIfActive { [tables] in try body(tables) }
    }

    /// Runs `body` with the store closed (compaction needs the writer lock and the files to
    /// itself), then opens it again. Calls arriving meanwhile wait; update streams end (the
    /// store they follow is released) and their clients resume by `Last-Event-ID`. Runs on
    /// a thread of its own, so that the pool's threads, waiting for it, cannot starve it.
    func withStoreClosed<Result: Sendable>(_ body: @escaping @Sendable (String) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [self] in
                gate.enterExclusive()
                defer { gate.leaveExclusive() }
                releaseStore()
                let result = Swift.Result { try body(path) }
                do {
                    let reopened = try Store(path: path, options: options)
                    slot.store.withLock { $0 = reopened }
                } catch {
                    options.logger.critical("reopening the store failed", metadata: ["error": "\(error)"])
                }
                continuation.resume(with: result)
            }
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
        store?.waitForBackgroundSnapshot()
    }

    /// Whether a store is open.
    public var isOpen: Bool { slot.store.withLock { $0 != nil } }

    /// Closes the store (after waiting for a background snapshot) and stops the threads.
    public func close() async throws {
        queue.stop()
        try await pool.runIfActive { [self] in
            gate.enterExclusive()
            defer { gate.leaveExclusive() }
            releaseStore()
        }
        try await pool.shutdownGracefully()
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
