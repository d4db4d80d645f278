import Crypto
import Foundation
import HeraldEvents
import HeraldStore
import HTTPTypes
import Hummingbird
import Synchronization

/// An `Idempotency-Key` as stored: the request it was first used with and, once answered,
/// the answer.
struct IdempotencyEntry: ServiceDocument, Sendable, Hashable {
    /// SHA-256 (hex) of the method, path, query and body of the first request.
    var request: String
    /// The store's last seq before the request appended anything: its records, if a crash
    /// cut it short after the commit, come after this.
    var seqBefore: UInt64
    /// The answer, once given; `nil` while the request is (or was, before a crash) in flight.
    var reply: StoredReply?
    /// Milliseconds since the epoch.
    var createdAt: Int64

    init(request: String, seqBefore: UInt64, reply: StoredReply?, createdAt: Int64) {
        self.request = request
        self.seqBefore = seqBefore
        self.reply = reply
        self.createdAt = createdAt
    }

    init?(_ fields: [String: JSONValue]) {
        guard let request = fields["request"]?.string, let seqBefore = fields["seqBefore"]?.unsigned,
            let createdAt = fields["createdAt"]?.integer
        else { return nil }
        var reply: StoredReply?
        if let stored = fields["reply"], !stored.isNull {
            // The body is kept as an array of byte values (the form 0.4 wrote).
            guard let status = stored.object?["status"]?.integer, let list = stored.object?["body"]?.array else { return nil }
            let body = list.compactMap { $0.integer.flatMap(UInt8.init(exactly:)) }
            guard body.count == list.count, let code = Int(exactly: status) else { return nil }
            reply = StoredReply(status: code, body: body)
        }
        self.init(request: request, seqBefore: seqBefore, reply: reply, createdAt: createdAt)
    }

    var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = ["request": .string(request), "seqBefore": .int(seqBefore), "createdAt": .int(createdAt)]
        if let reply { fields["reply"] = .object(["status": .int(reply.status), "body": .array(reply.body.map { .int($0) })]) }
        return fields
    }
}

/// `Idempotency-Key` handling for the mutating endpoints: a retried request (same key, same
/// endpoint) is answered from the stored reply instead of storing its events twice.
///
/// The protocol, each step durable before the next:
/// 1. record the key as pending, with the store's last seq;
/// 2. append (one group commit);
/// 3. record the reply under the key.
/// A crash between 2 and 3 leaves a pending key. Its retry looks in the log after the
/// recorded seq for records whose payload digests are the request's: found, it answers with
/// their seqs and appends nothing; not found, the append never committed and runs now.
/// Keys are kept for ``ServerConfiguration/idempotencySeconds`` after their first use: past
/// that, a request with the key runs as a new one, and ``expire()`` (run periodically)
/// removes them, so the table holds about one window of keys.
final class Idempotency: Sendable {
    static let header = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!
    /// The longest key accepted.
    static let maxKeyLength = 255

    private let host: StoreHost
    /// Keys with a request in flight in this process: a concurrent retry gets 409.
    private let inFlight = Mutex<Set<String>>([])
    /// How long a key is kept, in milliseconds; 0: for ever.
    let window: Int64
    /// Now, in milliseconds since the epoch (the store's clock).
    private let clock: @Sendable () -> Int64

    init(host: StoreHost, windowSeconds: Int, clock: @escaping @Sendable () -> Int64) {
        self.host = host
        window = Int64(max(0, windowSeconds)) * 1000
        self.clock = clock
    }

    /// Whether `entry` is past the window at `now`.
    func isExpired(_ entry: IdempotencyEntry, now: Int64) -> Bool {
        window > 0 && entry.createdAt <= now - window
    }

    /// Removes the keys past the window; returns how many.
    @discardableResult
    func expire() async throws -> Int {
        guard window > 0 else { return 0 }
        let now = clock()
        return try await host.tables { tables in
            try tables.removeAll(.idempotency, as: IdempotencyEntry.self) { self.isExpired($0, now: now) }
        }
    }

    /// Answers `request` through `perform`, or from the reply stored under its key.
    ///
    /// - Parameters:
    ///   - endpoint: the path the key is scoped to.
    ///   - body: the request body, part of the request's fingerprint.
    ///   - digests: the digests of the payloads the request would append (step 3's search).
    ///   - recovered: builds the reply from the seqs found for a pending key.
    ///   - perform: runs the request; a reply with a status of 500 or more is not stored.
    func answer(
        _ request: Request, endpoint: String, body: [UInt8], digests: Set<[UInt8]>, expected: Int,
        recovered: @escaping @Sendable ([UInt64]) -> StoredReply,
        perform: @escaping @Sendable () async throws -> StoredReply
    ) async throws -> Response {
        guard let key = request.headers[Self.header] else { return try await perform().response() }
        guard !key.isEmpty, key.utf8.count <= Self.maxKeyLength else {
            throw ServerError.badRequest(field: "Idempotency-Key", "must be 1 to \(Self.maxKeyLength) bytes")
        }
        let slot = Self.slot(endpoint: endpoint, key: key)
        guard inFlight.withLock({ $0.insert(slot).inserted }) else {
            throw ServerError(.conflict, field: "Idempotency-Key", "a request with this key is in progress; retry later")
        }
        defer { _ = inFlight.withLock { $0.remove(slot) } }
        let fingerprint = Self.fingerprint(method: request.method.rawValue, path: request.uri.path, query: request.uri.query, body: body)

        let now = clock()
        // A key past its window is forgotten, whether or not `expire()` has removed it yet.
        let found = try await host.tables { try $0.get(.idempotency, slot, as: IdempotencyEntry.self) }
            .flatMap { self.isExpired($0, now: now) ? nil : $0 }
        if let found {
            guard found.request == fingerprint else {
                throw ServerError(
                    .unprocessableContent, field: "Idempotency-Key",
                    "this key was used with a different request; use a new key for a new request")
            }
            if let reply = found.reply { return reply.response(replayed: true) }
            // Pending: a crash cut the first attempt short. Did its append commit?
            let seqs = try await host.run { store in try Self.seqs(of: digests, after: found.seqBefore, in: store) }
            if expected > 0 && seqs.count >= expected {
                let reply = recovered(Array(seqs.prefix(expected)))
                try await store(reply, under: slot, entry: found)
                return reply.response(replayed: true)
            }
        }
        let seqBefore = try await host.run { store in try store.history.bounds().lastSeqInLog }
        let entry = IdempotencyEntry(
            request: fingerprint, seqBefore: seqBefore, reply: nil, createdAt: now)
        try await host.tables { try $0.put(.idempotency, slot, entry) }
        let reply = try await perform()
        if reply.status < 500 { try await store(reply, under: slot, entry: entry) }
        return reply.response()
    }

    /// The request's fingerprint: SHA-256 (hex) of method, path, query and body.
    static func fingerprint(method: String, path: String, query: String?, body: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)?\(query ?? "")\n".utf8))
        hasher.update(data: body)
        return TokenAuthority.hex(hasher.finalize())
    }

    /// The table slot of `key` on `endpoint`.
    static func slot(endpoint: String, key: String) -> String { endpoint + "\u{0}" + key }

    private func store(_ reply: StoredReply, under slot: String, entry: IdempotencyEntry) async throws {
        var entry = entry
        entry.reply = reply
        try await host.tables { [entry] in try $0.put(.idempotency, slot, entry) }
    }

    /// The seqs, in order, of the records after `seq` made from payloads with these digests.
    static func seqs(of digests: Set<[UInt8]>, after seq: UInt64, in store: Store) throws -> [UInt64] {
        guard !digests.isEmpty else { return [] }
        var seqs: [UInt64] = []
        // The archive too: a scheduled compaction may have moved them out of the log.
        try store.history.forEach(from: seq + 1) { record in
            if let digest = record.source.digest, digests.contains(digest) { seqs.append(record.seq) }
            return true
        }
        return seqs
    }
}

extension StoredReply {
    /// The reply as a JSON response.
    func response(replayed: Bool = false) -> Response {
        var headers: HTTPFields = [:]
        if replayed { headers[Idempotency.replayedHeader] = "true" }
        return Response.json(body, status: HTTPResponse.Status(code: status), headers: headers)
    }

    /// A reply with a JSON document.
    init(status: HTTPResponse.Status = .ok, _ document: JSONValue) {
        self.init(status: status.code, body: document.bytes)
    }

    /// The reply a ``ServerError`` makes.
    init(_ error: ServerError) {
        var body: [String: JSONValue] = error.details
        var inner: [String: JSONValue] = ["reason": .string(error.reason)]
        if !error.field.isEmpty { inner["field"] = .string(error.field) }
        body["error"] = .object(inner)
        self.init(status: error.status, .object(body))
    }
}
