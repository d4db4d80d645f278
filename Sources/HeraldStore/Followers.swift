import Foundation
import Synchronization

/// The followers of ``Store/appliedEvents()`` and ``Store/appliedEvents(after:bufferLimit:)``:
/// their streams' continuations, by id.
///
/// They are kept apart from the store's state, under a lock of their own that is never held
/// while another is taken. A stream's termination handler, which removes its follower, runs
/// when the follower's task is cancelled, while the Swift runtime holds that task's status
/// lock; a commit hands events to the followers while it holds the state lock, and each
/// yield takes the status lock of the task it resumes. Had the handler taken the state lock,
/// a cancellation and a commit could each wait for the other's lock forever.
final class Followers: Sendable {
    /// One follower's stream.
    enum Follower: Sendable {
        /// ``Store/appliedEvents()``: buffers without limit.
        case unbounded(AsyncStream<Applied>.Continuation)
        /// ``Store/appliedEvents(after:bufferLimit:)``: a bounded buffer; a follower whose
        /// buffer is full is ended with ``StoreError/Code/followerFellBehind``.
        /// With an account, only that account's events are handed to it. One that is
        /// `catchingUp` is ended without an error instead, and reads what it missed from the
        /// log.
        case bounded(AsyncThrowingStream<Applied, any Error>.Continuation, path: String, account: String?, catchingUp: Bool)
    }

    private let continuations = Mutex<[UUID: Follower]>([:])

    /// Whether nobody follows.
    var isEmpty: Bool { continuations.withLock { $0.isEmpty } }

    /// Adds a follower.
    func add(_ continuation: AsyncStream<Applied>.Continuation, id: UUID) {
        continuations.withLock { $0[id] = .unbounded(continuation) }
    }

    /// Adds a follower with a bounded buffer, of `account`'s events (all when `nil`).
    func add(
        _ continuation: AsyncThrowingStream<Applied, any Error>.Continuation, path: String, account: String?, catchingUp: Bool, id: UUID
    ) {
        continuations.withLock { $0[id] = .bounded(continuation, path: path, account: account, catchingUp: catchingUp) }
    }

    /// Removes a follower, if it is still there.
    func remove(id: UUID) {
        _ = continuations.withLock { $0.removeValue(forKey: id) }
    }

    /// Hands `events` to every follower, in order. Called with the state locked, so that
    /// commits hand over their events one after the other, in seq order.
    func yield(_ events: [Applied]) {
        guard !events.isEmpty else { return }
        let current = continuations.withLock { Array($0) }
        var behind: [UUID] = []
        // The events by account, grouped once for all the followers of one account.
        var byAccount: [String: [Applied]]? = nil
        for (id, follower) in current {
            switch follower {
            case .unbounded(let continuation):
                for event in events { continuation.yield(event) }
            case .bounded(let continuation, let path, let account, let catchingUp):
                var handed = events
                if let account {
                    if byAccount == nil { byAccount = Dictionary(grouping: events, by: \.event.account) }
                    handed = byAccount?[account] ?? []
                }
                for event in handed {
                    if case .dropped = continuation.yield(event) {
                        // What it buffered is still delivered, then the error says where to
                        // resume from: the seq before the first event it missed (no error
                        // for one catching up: it reads the log after the last it got).
                        let error = StoreError.followerFellBehind(path: path, lastDelivered: event.seq - 1)
                        continuation.finish(throwing: catchingUp ? nil : error)
                        behind.append(id)
                        break
                    }
                }
            }
        }
        if !behind.isEmpty { continuations.withLock { for id in behind { $0.removeValue(forKey: id) } } }
    }

    /// Ends every follower's stream (after the events it buffered) and forgets them all.
    func finishAll() {
        let all = continuations.withLock { continuations in
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }
        for follower in all {
            switch follower {
            case .unbounded(let continuation): continuation.finish()
            case .bounded(let continuation, _, _, _): continuation.finish()
            }
        }
    }
}
