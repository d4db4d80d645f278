import Foundation
import HeraldEvents
import HeraldStore

/// The server's side of group commit: requests hand their events to a few dedicated threads;
/// each appends everything waiting in one `Store.appendBatch` (one transaction, one fsync)
/// and hands each request its seqs.
///
/// The store's own group commit needs one blocked thread per concurrent caller; with one
/// request per connection that is a thread wake-up per request, and on a small machine the
/// context switches, not the disk, then bound the rate. Here a busy server wakes the
/// committing thread once per batch, and requests wait as suspended tasks, not threads.
/// A batch is atomic: if its commit fails, every request in it gets the error and none of
/// their events is stored.
final class CommitQueue: @unchecked Sendable {
    // @unchecked: `waiting` and `stopped` are only touched with `condition` locked.
    private struct Waiting {
        var id: UInt64
        var events: [(Event, Source)]
        var continuation: CheckedContinuation<ClosedRange<UInt64>?, any Error>
    }

    private let condition = NSCondition()
    private var waiting: [Waiting] = []
    private var stopped = false
    /// Accounts whose events are refused (503): being moved to, or moved to, another instance.
    private var fenced: Set<String> = []
    /// The id the next request gets, and the ids of requests queued or committing.
    private var nextID: UInt64 = 0
    private var unfinished: Set<UInt64> = []
    private let commit: @Sendable ([(Event, Source)]) throws -> ClosedRange<UInt64>?
    /// Events per commit at most (a request's events are never split).
    private let batchLimit: Int

    /// Starts `threads` committing threads; `commit` appends one batch (blocking). With more
    /// than one, a batch is gathered while another commits, and the store's own group commit
    /// merges batches that meet, overlapping the projection work of one with the fsync of
    /// the next.
    init(threads: Int = 4, batchLimit: Int = 16_384, commit: @escaping @Sendable ([(Event, Source)]) throws -> ClosedRange<UInt64>?) {
        self.commit = commit
        self.batchLimit = batchLimit
        for index in 0..<max(1, threads) {
            let thread = Thread { [self] in loop() }
            thread.name = "herald-commit-\(index)"
            thread.start()
        }
    }

    /// Appends `events` in the next batch; returns their seqs once durable.
    func append(_ events: [(Event, Source)]) async throws -> ClosedRange<UInt64>? {
        guard !events.isEmpty else { return nil }
        return try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if stopped {
                condition.unlock()
                continuation.resume(throwing: ServerError.unavailable("the store is closing"))
                return
            }
            if !fenced.isEmpty, let event = events.first(where: { fenced.contains($0.0.account) }) {
                condition.unlock()
                continuation.resume(throwing: Self.fencedError(event.0.account))
                return
            }
            unfinished.insert(nextID)
            waiting.append(Waiting(id: nextID, events: events, continuation: continuation))
            nextID += 1
            condition.signal()
            condition.unlock()
        }
    }

    /// Refuses appends of `accounts`' events from now on, then waits (blocking) until every
    /// append queued before has committed or failed: once it returns, the store holds every
    /// event of theirs it will ever acknowledge, until ``setFenced(_:)`` lifts the fence.
    func setFenced(_ accounts: Set<String>) {
        condition.lock()
        let before = accounts.subtracting(fenced).isEmpty ? 0 : nextID
        fenced = accounts
        while let oldest = unfinished.min(), oldest < before { condition.wait() }
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

    /// Commits what is waiting, then stops the thread; later appends get 503.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while waiting.isEmpty && !stopped { condition.wait() }
            if waiting.isEmpty && stopped {
                condition.unlock()
                return
            }
            var taken = 0
            var count = 0
            while taken < waiting.count && (taken == 0 || count + waiting[taken].events.count <= batchLimit) {
                count += waiting[taken].events.count
                taken += 1
            }
            let batch = Array(waiting.prefix(taken))
            waiting.removeFirst(taken)
            condition.unlock()

            var events: [(Event, Source)] = []
            events.reserveCapacity(count)
            for request in batch { events += request.events }
            do {
                if let range = try commit(events) {
                    var next = range.lowerBound
                    for request in batch {
                        let last = next + UInt64(request.events.count) - 1
                        request.continuation.resume(returning: next...last)
                        next = last + 1
                    }
                }
            } catch {
                for request in batch { request.continuation.resume(throwing: error) }
            }
            condition.lock()
            for request in batch { unfinished.remove(request.id) }
            condition.broadcast()
            condition.unlock()
        }
    }
}
