import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

extension HeraldServer {
    /// The name of the header an `EventSource` sends when it reconnects.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!

    /// `GET /v1/accounts/{account}/updates`: the account's update stream as Server-Sent
    /// Events, one event per log record that produced updates for it: `id:` is the seq,
    /// `data:` the line of the updates form (STATE.md).
    ///
    /// Resuming: with `Last-Event-ID: S` (or `?after=S`), every update after seq `S` is sent
    /// once, in order: the store's `appliedEvents(after: S)` replays those already in the
    /// log, then follows live ones as they commit, so nothing falls in between and nothing
    /// comes twice, across restarts of either side (seqs are durable). Without either, the
    /// stream starts after the current last seq: read `/state` first (it carries its `seq`)
    /// and pass it as `after` to get exactly what follows that state.
    func updateStream(_ request: Request, account: String) async throws -> Response {
        var after: UInt64? = nil
        for (name, text) in [("Last-Event-ID", request.headers[Self.lastEventID]), ("after", request.uri.queryParameters.get("after"))] {
            guard let text, !text.isEmpty else { continue }
            guard let seq = UInt64(text.trimmingCharacters(in: CharacterSet.whitespaces)) else {
                throw ServerError.badRequest(field: name, "must be a seq (a non-negative integer)")
            }
            after = seq
            break
        }
        // The store's resumable follow of the account: the log after `start`, then live. One
        // that falls behind its buffer (a bulk append to the account) reads what it missed
        // from the log: the stream does not end for it.
        let (committed, followed) = try await host.run { [after] store in
            let committed = try store.history.bounds().lastSeqInLog
            return (committed, store.appliedEvents(after: after ?? committed, account: account, catchingUp: true))
        }
        let start = after ?? committed
        guard start <= committed else {
            throw ServerError(.conflict, field: "Last-Event-ID", "seq \(start) is beyond the store's last seq \(committed)")
        }
        let metrics = self.metrics
        let heartbeat = Duration.seconds(configuration.heartbeatSeconds)
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            metrics.sseClients.increment()
            defer { metrics.sseClients.decrement() }
            // Tell the client how long to wait before reconnecting, and that the stream is open.
            try await writer.write(ByteBuffer(string: "retry: 1000\n: stream of \(account) after \(start)\n\n"))
            // The account's events, and a keep-alive comment every `heartbeat` so that a
            // client gone away is noticed (the write fails) even on a quiet account. Ends at a
            // graceful shutdown (which finishes the merged stream, after what it holds), and
            // when the store is released (a compaction; the client resumes). Neither the
            // events nor the end go through an unstructured task (ServiceLifecycle's
            // `cancelOnGracefulShutdown()` merges in one), so none waits for the cooperative
            // pool.
            let (merged, feed) = AsyncThrowingStream<Applied?, any Error>.makeStream(bufferingPolicy: .unbounded)
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        do {
                            for try await applied in followed { feed.yield(applied) }
                            feed.finish()
                        } catch {
                            feed.finish(throwing: error)
                        }
                    }
                    group.addTask {
                        while !Task.isCancelled {
                            try? await Task.sleep(for: heartbeat)
                            feed.yield(nil)
                        }
                    }
                    defer { group.cancelAll() }
                    for try await item in merged {
                        guard let applied = item else {
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                            continue
                        }
                        guard !applied.updates.isEmpty else { continue }
                        let json = Projection.updatesJSON(seq: applied.seq, account: account, updates: applied.updates)
                        try await writer.write(Self.event(seq: applied.seq, json: json))
                    }
                }
            } onGracefulShutdown: {
                feed.finish()
            }
            try await writer.finish(nil)
        })
    }

    /// One SSE event.
    static func event(seq: UInt64, json: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.utf8.count + 32)
        buffer.writeString("id: \(seq)\ndata: ")
        buffer.writeString(json)
        buffer.writeString("\n\n")
        return buffer
    }
}
