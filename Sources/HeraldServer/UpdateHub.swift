import HeraldStore
import Synchronization

/// One follower of the store for every update stream: each commit is handed to the store's
/// followers under its state lock, so a thousand SSE clients following the store directly
/// would make every commit wait on a thousand hand-offs. The hub follows it once and passes
/// each applied event on to the streams of its account only.
///
/// When the store is released (a compaction, shutdown), the store's stream ends; the hub then
/// ends every client stream (the clients resume with `Last-Event-ID`) and the next
/// subscription follows the reopened store.
final class UpdateHub: Sendable {
    private struct State {
        /// Which store stream is being followed (bumped when it ends), or `nil` when none.
        var generation: UInt64?
        var nextGeneration: UInt64 = 0
        var nextId: UInt64 = 0
        var subscribers: [String: [UInt64: AsyncStream<Applied>.Continuation]] = [:]
        var count = 0
    }

    private let host: StoreHost
    private let state = Mutex(State())

    init(host: StoreHost) { self.host = host }

    /// How many streams are open.
    var count: Int { state.withLock { $0.count } }

    /// A stream of `account`'s applied events from now on: every event committed after this
    /// returns is in it (and possibly a few committed just before; callers skip seqs they
    /// already have).
    func subscribe(account: String) async throws -> AsyncStream<Applied> {
        let (stream, continuation) = AsyncStream<Applied>.makeStream(bufferingPolicy: .unbounded)
        while true {
            let id: UInt64? = state.withLock { state in
                guard state.generation != nil else { return nil }
                return register(continuation, account: account, in: &state)
            }
            if let id {
                continuation.onTermination = { [weak self] _ in self?.remove(id, account: account) }
                return stream
            }
            // Not following the store: follow it (the store stream starts before any client
            // registers, so none misses an event), unless another subscriber got there first.
            let followed = try await host.run { store in store.appliedEvents() }
            let installed: (UInt64, UInt64)? = state.withLock { state in
                guard state.generation == nil else { return nil }
                let generation = state.nextGeneration
                state.nextGeneration += 1
                state.generation = generation
                return (generation, register(continuation, account: account, in: &state))
            }
            guard let (generation, id) = installed else { continue }  // `followed` is dropped
            continuation.onTermination = { [weak self] _ in self?.remove(id, account: account) }
            Task { await self.forward(followed, generation: generation) }
            return stream
        }
    }

    private func register(_ continuation: AsyncStream<Applied>.Continuation, account: String, in state: inout State) -> UInt64 {
        let id = state.nextId
        state.nextId += 1
        state.subscribers[account, default: [:]][id] = continuation
        state.count += 1
        return id
    }

    private func remove(_ id: UInt64, account: String) {
        state.withLock { state in
            guard state.subscribers[account]?.removeValue(forKey: id) != nil else { return }
            state.count -= 1
            if state.subscribers[account]?.isEmpty == true { state.subscribers[account] = nil }
        }
    }

    /// Passes the events of one store stream on; when it ends, ends every client stream.
    private func forward(_ followed: AsyncStream<Applied>, generation: UInt64) async {
        for await applied in followed {
            let targets = state.withLock { Array(($0.subscribers[applied.event.account] ?? [:]).values) }
            for continuation in targets { continuation.yield(applied) }
        }
        let ended = state.withLock { state -> [AsyncStream<Applied>.Continuation] in
            guard state.generation == generation else { return [] }
            state.generation = nil
            let all = state.subscribers.values.flatMap { Array($0.values) }
            state.subscribers = [:]
            state.count = 0
            return all
        }
        for continuation in ended { continuation.finish() }
    }
}
