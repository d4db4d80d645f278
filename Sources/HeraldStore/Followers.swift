import Foundation
import Synchronization

/// The followers of ``Store/appliedEvents()``: their streams' continuations, by id.
///
/// They are kept apart from the store's state, under a lock of their own that is never held
/// while another is taken. A stream's termination handler, which removes its follower, runs
/// when the follower's task is cancelled, while the Swift runtime holds that task's status
/// lock; a commit hands events to the followers while it holds the state lock, and each
/// yield takes the status lock of the task it resumes. Had the handler taken the state lock,
/// a cancellation and a commit could each wait for the other's lock forever.
final class Followers: Sendable {
    private let continuations = Mutex<[UUID: AsyncStream<Applied>.Continuation]>([:])

    /// Whether nobody follows.
    var isEmpty: Bool { continuations.withLock { $0.isEmpty } }

    /// Adds a follower.
    func add(_ continuation: AsyncStream<Applied>.Continuation, id: UUID) {
        continuations.withLock { $0[id] = continuation }
    }

    /// Removes a follower, if it is still there.
    func remove(id: UUID) {
        _ = continuations.withLock { $0.removeValue(forKey: id) }
    }

    /// Hands `events` to every follower, in order. Called with the state locked, so that
    /// commits hand over their events one after the other, in seq order.
    func yield(_ events: [Applied]) {
        guard !events.isEmpty else { return }
        let current = continuations.withLock { Array($0.values) }
        for event in events {
            for continuation in current { continuation.yield(event) }
        }
    }

    /// Ends every follower's stream (after the events it buffered) and forgets them all.
    func finishAll() {
        let all = continuations.withLock { continuations in
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }
        for continuation in all { continuation.finish() }
    }
}
