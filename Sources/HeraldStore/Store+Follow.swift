import Foundation
import HeraldEvents
import HeraldProjection
import Synchronization

extension Store {
    /// The default buffer of ``appliedEvents(after:bufferLimit:)``, in events.
    public static let followerBufferLimit = 10_000

    /// Every event applied after seq `seq`, with its updates, in seq order: first those
    /// already in the log (replayed from it, with the updates the store emitted for them),
    /// then each new one once it is durable. Resumable: a follower that stored the last seq
    /// it handled calls this again with it, after a restart of either side, and gets every
    /// later event exactly once, no gap and no repeat.
    ///
    /// Backpressure: the log part is read as the follower asks for it, a page at a time.
    /// Live events wait in a buffer of `bufferLimit` events; a follower that falls further
    /// behind has its stream end, after the events it buffered, with
    /// ``StoreError/Code/followerFellBehind``, and resumes with
    /// `appliedEvents(after: lastDelivered)`: appends never wait for a slow follower, and
    /// memory stays bounded. The stream ends when the store is closed or released; it does
    /// not keep the store alive. Reading the log runs on the store's own threads.
    public func appliedEvents(after seq: UInt64, bufferLimit: Int = Store.followerBufferLimit) -> AsyncThrowingStream<Applied, any Error> {
        appliedEvents(after: seq, account: nil, catchingUp: false, bufferLimit: bufferLimit)
    }

    /// ``appliedEvents(after:bufferLimit:)`` restricted to the events of `account` (every
    /// event when `nil`): one account's update stream, as `herald serve` sends it. The
    /// events of other accounts are still replayed (the updates depend on them) but never
    /// handed out, and a commit gives a live follower only its account's events, so many
    /// followers of a few accounts each cost a commit little. `bufferLimit` counts the
    /// account's events only.
    ///
    /// With `catchingUp`, a follower that falls behind its buffer does not end: after the
    /// events it buffered, it reads those it missed from the log, as a new follower would,
    /// then follows live again. Memory stays bounded and no event is missed; only the store
    /// closing or being released ends the stream.
    package func appliedEvents(
        after seq: UInt64, account: String?, catchingUp: Bool, bufferLimit: Int = Store.followerBufferLimit
    ) -> AsyncThrowingStream<Applied, any Error> {
        precondition(bufferLimit > 0, "a follower buffers at least one event")
        let follower = ResumableFollower(store: self, after: seq, account: account, catchingUp: catchingUp, bufferLimit: bufferLimit)
        return AsyncThrowingStream(unfolding: { try await follower.next() })
    }

    /// Registers a live follower (of `account`'s events, or of all when `nil`) when the log
    /// ends at `position` (no committed event after it is unpublished): atomic with
    /// publishing, which happens with the state locked. Events at or below `position` that
    /// are published later are skipped by the follower.
    func follow(
        at position: UInt64, account: String?, catchingUp: Bool, bufferLimit: Int
    ) throws -> AsyncThrowingStream<Applied, any Error>? {
        try state.withLock { _ -> AsyncThrowingStream<Applied, any Error>? in
            guard try self.history.lastSeqInLog() <= position else { return nil }
            let (stream, continuation) = AsyncThrowingStream<Applied, any Error>.makeStream(bufferingPolicy: .bufferingOldest(bufferLimit))
            if isClosed {
                continuation.finish()
                return stream
            }
            let id = UUID()
            continuation.onTermination = { [followers] _ in followers.remove(id: id) }
            followers.add(continuation, path: path, account: account, catchingUp: catchingUp, id: id)
            return stream
        }
    }
}

/// The state behind one ``Store/appliedEvents(after:bufferLimit:)`` stream: replaying the log
/// page by page into its own projection, then following live.
///
/// `AsyncThrowingStream(unfolding:)` calls ``next()`` once at a time (a stream has one
/// consumer, and it awaits each element before asking for the next), so the state needs no
/// lock of its own: hence `@unchecked Sendable`.
final class ResumableFollower: @unchecked Sendable {
    /// The replay's projection, mutated in place on the store's threads.
    private final class ProjectionBox: @unchecked Sendable {
        var projection: Projection?
    }

    private weak var store: Store?
    /// Whose events are handed out (every account's when `nil`).
    private let account: String?
    /// Whether falling behind the live buffer sends the follower back to the log.
    private let catchingUp: Bool
    private let bufferLimit: Int
    /// The last seq handed out or read past (or the seq to start after).
    private var position: UInt64
    private let box = ProjectionBox()
    private var page: [Applied] = []
    private var pageIndex = 0
    /// The last seq the page read, handed out or not.
    private var pageEnd: UInt64 = 0
    private var live: AsyncThrowingStream<Applied, any Error>.AsyncIterator?
    static let pageSize = 512

    init(store: Store, after seq: UInt64, account: String?, catchingUp: Bool, bufferLimit: Int) {
        self.store = store
        self.account = account
        self.catchingUp = catchingUp
        self.position = seq
        self.bufferLimit = bufferLimit
    }

    func next() async throws -> Applied? {
        while true {
            if pageIndex < page.count {
                let applied = page[pageIndex]
                pageIndex += 1
                position = applied.seq
                return applied
            }
            position = max(position, pageEnd)
            if live != nil {
                // Events published after registration may include some at or below the
                // position the log was read to: skip them.
                while let applied = try await live!.next() {
                    if applied.seq > position {
                        position = applied.seq
                        return applied
                    }
                }
                // The live stream ended: the store closed or went, the task was cancelled,
                // or (catching up) the follower fell behind: then read the log after
                // `position` again.
                guard catchingUp, !Task.isCancelled, let store, !store.isClosed else { return nil }
                live = nil
                continue
            }
            guard let store else { return nil }
            if store.isClosed { return nil }
            if let stream = try store.follow(at: position, account: account, catchingUp: catchingUp, bufferLimit: bufferLimit) {
                live = stream.makeAsyncIterator()
                box.projection = nil
                continue
            }
            do {
                try await readPage(from: store)
            } catch let error as StoreError where error.code == .closed {
                return nil  // closed while reading: the end, as for a live follower
            }
        }
    }

    /// Reads the next page of the log after ``position`` on the store's threads, applying it
    /// to the follower's projection to get each event's updates; keeps the events of
    /// ``account``.
    private func readPage(from store: Store) async throws {
        let start = position
        let box = self.box
        let account = self.account
        let (applied, end) = try await store.offload { () -> ([Applied], UInt64) in
            if box.projection == nil { box.projection = try store.projection(at: start) }
            var applied: [Applied] = []
            var read = 0
            var end = start
            try store.history.forEach(from: start + 1) { record in
                let updates = box.projection!.apply(record.event, seq: record.seq).updates
                if account == nil || record.event.account == account {
                    applied.append(Applied(seq: record.seq, event: record.event, updates: updates))
                }
                read += 1
                end = record.seq
                return read < ResumableFollower.pageSize
            }
            return (applied, end)
        }
        page = applied
        pageIndex = 0
        pageEnd = end
    }
}
