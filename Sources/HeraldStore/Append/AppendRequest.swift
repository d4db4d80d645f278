import Foundation

/// One caller's records, waiting to be committed and applied.
final class AppendRequest: @unchecked Sendable {
    // @unchecked: every field is set at init and never changed; `reply` is used once, by
    // whichever thread answers the request (see ``answer(_:)``).
    let records: [PendingRecord]
    /// Whether the caller wants each event's updates (else only the seqs).
    let wantsUpdates: Bool
    private let reply: Reply

    /// How the caller waits for its answer.
    enum Reply {
        /// A synchronous caller, blocked on its own waiter.
        case waiter(Waiter)
        /// An `async` caller, suspended.
        case continuation(CheckedContinuation<Committed, any Error>)
    }

    init(_ records: [PendingRecord], wantsUpdates: Bool, reply: Reply) {
        self.records = records
        self.wantsUpdates = wantsUpdates
        self.reply = reply
    }

    /// What a request got: the seq of its first record and, when it asked, its records
    /// applied with their updates.
    struct Committed: Sendable {
        var firstSeq: UInt64
        var applied: [Applied]
    }

    /// Answers the caller; called once.
    func answer(_ result: Result<Committed, any Error>) {
        switch reply {
        case .waiter(let waiter): waiter.finish(result)
        case .continuation(let continuation): continuation.resume(with: result)
        }
    }

    /// A synchronous caller's answer: set once, then the caller is woken.
    final class Waiter: @unchecked Sendable {
        // @unchecked: `result` is written once, before `done` is signalled, and read only
        // after waiting on it.
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<Committed, any Error>?

        fileprivate func finish(_ result: Result<Committed, any Error>) {
            self.result = result
            done.signal()
        }

        /// Blocks until the request is answered.
        func wait() throws -> Committed {
            done.wait()
            return try result!.get()
        }
    }
}

/// Requests committed together under consecutive seqs (imports: their own), waiting to be
/// applied.
struct CommittedBatch: Sendable {
    var requests: [AppendRequest]
    /// The seqs of every record of `requests`, in order.
    var seqs: [UInt64]
}
