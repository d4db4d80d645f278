import Foundation
import HeraldEvents
import HeraldProjection

// The async API: an append suspends its caller until the apply thread answers it; other
// calls run their blocking part (a log read, a snapshot write) on the store's own threads
// and suspend the caller meanwhile, so a task never blocks Swift concurrency's cooperative
// pool. Concurrent appends, sync and async alike, share commits.

extension Store {
    /// Runs `body` on the store's blocking queue and resumes the caller with its result.
    ///
    /// `body` (and so the store it captures) is released before the caller resumes, so a
    /// caller that drops its last reference to the store right after can reopen the
    /// directory at once.
    func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await HeraldStore.offload(on: blockingQueue, body)
    }

    /// Appends one event like `append(_:source:)`, suspending (not blocking) until it is
    /// durable and applied.
    @discardableResult
    public func append(_ event: Event, source: Source = .library) async throws -> Applied {
        try await submit([validated(event, source: source)], wantsUpdates: true)!.applied[0]
    }

    /// Appends a batch atomically like `append(contentsOf:)`, suspending until it is durable
    /// and applied.
    @discardableResult
    public func append(contentsOf batch: [(Event, Source)]) async throws -> [Applied] {
        try await submit(validated(batch), wantsUpdates: true)?.applied ?? []
    }

    /// Appends a batch atomically like `appendBatch(_:)`, suspending until it is durable and
    /// applied; returns the seqs it got. For the server, in this package: an `async` overload
    /// of `appendBatch(_:)` would be preferred in every `async` context, and so break the
    /// callers there that call the blocking one without `await`.
    @discardableResult
    package func appendBatchSuspending(_ batch: [(Event, Source)]) async throws -> ClosedRange<UInt64>? {
        guard let committed = try await submit(validated(batch), wantsUpdates: false) else { return nil }
        return committed.firstSeq...(committed.firstSeq + UInt64(batch.count) - 1)
    }

    /// Takes a snapshot like `snapshot()`, suspending meanwhile.
    @discardableResult
    public func snapshot() async throws -> UInt64 {
        try await offload { try self.snapshot() }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closedFlag.load(ordering: .acquiring) }
}

/// Runs `body` on `queue` and resumes the caller with its result, releasing `body` (and what
/// it captures) before the caller resumes.
func offload<T: Sendable>(on queue: DispatchQueue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let work = OffloadedWork(body)
    return try await withCheckedThrowingContinuation { continuation in
        queue.async { continuation.resume(with: work.run()) }
    }
}

/// A closure run once on another thread and released as soon as it has run.
private final class OffloadedWork<T: Sendable>: @unchecked Sendable {
    // Written once by `run`, on the one thread that runs it.
    private var body: (@Sendable () throws -> T)?

    init(_ body: @escaping @Sendable () throws -> T) { self.body = body }

    func run() -> Result<T, any Error> {
        let body = self.body!
        self.body = nil
        return Result { try body() }
    }
}
