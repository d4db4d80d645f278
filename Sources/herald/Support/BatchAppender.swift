import Foundation
import HeraldEvents
import HeraldStore

/// Appends the batches of a bulk load on a thread of its own, so that decoding the next batch
/// overlaps the commit (and projection replay) of the previous one.
///
/// At most one batch is in flight: ``submit(_:)`` waits while the previous batch is still
/// being appended, so memory stays at two batches. Batches commit in submission order, one at
/// a time; `appended` is called on the appending thread after each commit is durable, in
/// order. The first failure stops the appending: later batches are dropped, and the error is
/// rethrown by the next ``submit(_:)`` or by ``finish()``.
final class BatchAppender: @unchecked Sendable {
    // @unchecked: `failure` and `finished` are only touched with `lock` held; `store` and
    // `appended` are used by the appending thread only, one batch at a time (the queue is
    // serial).
    private let store: Store
    private let appended: (_ seqs: ClosedRange<UInt64>, _ count: Int) -> Void
    private let queue = DispatchQueue(label: "herald.ingest.append")
    /// One permit per batch allowed in flight.
    private let inFlight = DispatchSemaphore(value: 1)
    private let lock = NSLock()
    private var failure: (any Error)?

    /// An appender to `store`; `appended` hears of every durable batch.
    init(store: Store, appended: @escaping (_ seqs: ClosedRange<UInt64>, _ count: Int) -> Void) {
        self.store = store
        self.appended = appended
    }

    /// Hands `batch` over for appending once the previous batch has committed; throws the
    /// error of an earlier batch, if one failed (then `batch` is not appended).
    func submit(_ batch: [(Event, Source)]) throws {
        guard !batch.isEmpty else { return }
        inFlight.wait()
        if let failure = lock.withLock({ failure }) {
            inFlight.signal()
            throw failure
        }
        queue.async { [self] in
            defer { inFlight.signal() }
            do {
                if let seqs = try store.appendBatch(batch) { appended(seqs, batch.count) }
            } catch {
                lock.withLock { failure = failure ?? error }
            }
        }
    }

    /// Waits until every submitted batch has committed; throws the first failure.
    func finish() throws {
        queue.sync {}
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}
