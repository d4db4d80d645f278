import AsyncHTTPClient
import Foundation
import HeraldEvents
import HeraldStore
import NIOCore
import NIOHTTP1

/// Moves one account from one `herald serve` instance to another while both serve, with no
/// acknowledged event lost or repeated (`herald move-account`):
///
/// 1. copy: the account's records, in seq order, from the source's `…/export` to the
///    target's `…/import` (new seqs there; format and digest kept), in chunks, each with an
///    `Idempotency-Key`, in passes until one finds little new;
/// 2. fence: the source refuses the account's appends (503, `Retry-After`) and answers once
///    every append queued before has committed, so its log holds every event it acknowledged;
/// 3. the last copy pass, and the account's pushkeys and Web Push subscriptions;
/// 4. check: the account's state on both, but for the seqs, must be equal (else the source
///    is unfenced and the move stops);
/// 5. cut-over: the router sends the account to the target (``HAProxyRouting``); requests
///    that the fence refused meanwhile are retried by their clients and land there;
/// 6. purge: the account's records and registrations are removed from the source, whose
///    fence stays, so a straggler is refused rather than stored in the wrong place.
public struct AccountMove: Sendable {
    /// The account.
    public var account: String
    /// The source instance's base URL (`http://10.0.0.1:8080`) and admin token.
    public var source: String
    public var sourceToken: String
    /// The target instance's base URL and admin token.
    public var target: String
    public var targetToken: String
    /// How the router is told (nil: the caller switches routing itself, between `copy` and `purge`).
    public var routing: HAProxyRouting?
    /// The router's name for the target (`use_backend` value in the map).
    public var targetBackend: String?
    /// Remove the account from the source after the cut-over.
    public var purgeSource = true
    /// Events per copy request.
    public var chunk = 5_000

    /// A move of `account` from `source` to `target`.
    public init(account: String, source: String, sourceToken: String, target: String, targetToken: String) {
        self.account = account
        self.source = source
        self.sourceToken = sourceToken
        self.target = target
        self.targetToken = targetToken
    }

    /// What a move did.
    public struct Report: Sendable, Hashable {
        /// Events copied, in how many passes (the last one fenced).
        public var eventsCopied = 0
        public var passes = 0
        /// How long the account's appends were refused before the cut-over, in milliseconds.
        public var fencedMilliseconds = 0
        /// Pushkeys and Web Push subscriptions copied.
        public var pushkeys = 0
        public var subscriptions = 0
        /// Records purged from the source (0 when it keeps them).
        public var purged = 0
    }

    /// What a move would copy, without changing anything: the account's events and
    /// registrations on the source, and whether the target knows the account already.
    public func plan() async throws -> (events: Int, pushkeys: Int, subscriptions: Int, targetHasAccount: Bool) {
        var events = 0
        var after: UInt64 = 0
        while true {
            let (count, last) = try await exportChunk(after: after).summary
            if count == 0 { break }
            events += count
            after = last
        }
        let registrations = try await registrations()
        let targetState = try await call(target, targetToken, .GET, "/v1/accounts/\(escaped)/state")
        return (events, registrations.pushkeys, registrations.subscriptions, targetState.status == 200)
    }

    /// Runs the move; `progress` gets one line per step.
    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        var report = Report()
        let known = try await call(target, targetToken, .GET, "/v1/accounts/\(escaped)/state")
        guard known.status == 404 else {
            throw ServerError(
                .conflict, field: "target",
                "\(target) already holds account \(account) (status \(known.status)); purge it there first (POST /v1/admin/accounts/…/purge)")
        }
        // 1. Copy while the source still takes the account's appends.
        var after: UInt64 = 0
        while report.passes < 5 {
            let copied = try await copy(after: &after)
            report.eventsCopied += copied
            report.passes += 1
            progress("pass \(report.passes): copied \(copied) events (through source seq \(after))")
            if copied < 500 { break }
        }
        // 2. Fence, then the last pass: nothing of the account is acknowledged after it.
        let fencedAt = ContinuousClock.now
        try await expectOK(call(source, sourceToken, .POST, "/v1/admin/accounts/\(escaped)/fence", body: Data(JSONValue.object(["movedTo": .string(target)]).bytes)), "fence")
        progress("fenced on the source")
        do {
            let copied = try await copy(after: &after)
            report.eventsCopied += copied
            report.passes += 1
            progress("last pass: copied \(copied) events (through source seq \(after))")
            let registrations = try await call(source, sourceToken, .GET, "/v1/admin/accounts/\(escaped)/registrations")
            try expectOK(registrations, "registrations")
            try expectOK(try await call(target, targetToken, .POST, "/v1/admin/accounts/\(escaped)/registrations", body: registrations.body), "registrations")
            (report.pushkeys, report.subscriptions) = try Self.registrationCounts(registrations.body)
            try await compareStates()
            progress("state equal on both (but for seqs)")
        } catch {
            _ = try? await call(source, sourceToken, .DELETE, "/v1/admin/accounts/\(escaped)/fence")
            throw error
        }
        // 3. Cut-over.
        if let routing, let targetBackend {
            try await routing.pin(account: account, to: targetBackend)
            progress("router: \(account) → \(targetBackend)")
        }
        report.fencedMilliseconds = Int((ContinuousClock.now - fencedAt) / .milliseconds(1))
        // 4. Purge the source.
        if purgeSource {
            let purged = try await call(source, sourceToken, .POST, "/v1/admin/accounts/\(escaped)/purge")
            try expectOK(purged, "purge")
            report.purged = (try? JSONParser.parse(Array(purged.body)))?.object?["recordsRemoved"]?.integer.map { Int($0) } ?? 0
            progress("purged \(report.purged) records from the source")
        }
        return report
    }

    /// Copies the account's records after `after` until the source has none left; moves `after`.
    private func copy(after: inout UInt64) async throws -> Int {
        var copied = 0
        while true {
            let lines = try await exportChunk(after: after)
            let (count, last) = lines.summary
            if count == 0 { return copied }
            let imported = try await call(
                target, targetToken, .POST, "/v1/admin/accounts/\(escaped)/import", body: lines.body,
                headers: [("Idempotency-Key", "move \(account) \(after + 1)-\(last)")])
            try expectOK(imported, "import")
            copied += count
            after = last
        }
    }

    private func exportChunk(after: UInt64) async throws -> (body: Data, summary: (count: Int, last: UInt64)) {
        let response = try await call(source, sourceToken, .GET, "/v1/admin/accounts/\(escaped)/export?after=\(after)&limit=\(chunk)")
        try expectOK(response, "export")
        let lines = response.body.split(separator: UInt8(ascii: "\n"))
        guard let lastLine = lines.last else { return (response.body, (0, after)) }
        let last = try ExportLine(lastLine).seq
        return (response.body, (lines.count, last))
    }

    private func registrations() async throws -> (pushkeys: Int, subscriptions: Int) {
        let response = try await call(source, sourceToken, .GET, "/v1/admin/accounts/\(escaped)/registrations")
        try expectOK(response, "registrations")
        return try Self.registrationCounts(response.body)
    }

    /// The pushkeys and subscriptions in a `…/registrations` body.
    private static func registrationCounts(_ body: Data) throws -> (pushkeys: Int, subscriptions: Int) {
        let document = try JSONParser.parse(Array(body)).object ?? [:]
        return (document["pushkeys"]?.object?.count ?? 0, document["subscriptions"]?.object?.count ?? 0)
    }

    /// Both instances' state of the account, seqs left out, must be equal.
    private func compareStates() async throws {
        let path = "/v1/accounts/\(escaped)/state"
        let before = try await call(source, sourceToken, .GET, path)
        let after = try await call(target, targetToken, .GET, path)
        try expectOK(before, "state on the source")
        try expectOK(after, "state on the target")
        let left = Self.withoutSeqs(try JSONParser.parse(Array(before.body)))
        let right = Self.withoutSeqs(try JSONParser.parse(Array(after.body)))
        guard left == right else {
            throw ServerError(.conflict, field: "state", "the account's state differs between \(source) and \(target) after the copy; the source is unfenced, and the target's copy should be purged")
        }
    }

    /// A JSON value with every `seq` member removed (seqs are per instance).
    package static func withoutSeqs(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.filter { $0.key != "seq" }.mapValues(withoutSeqs))
        case .array(let elements): .array(elements.map(withoutSeqs))
        default: value
        }
    }

    private var escaped: String { account.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? account }

    private func expectOK(_ response: (status: Int, body: Data), _ step: String) throws {
        guard (200..<300).contains(response.status) else {
            throw ServerError(.badGateway, field: step, "status \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    private func call(
        _ base: String, _ token: String, _ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [(String, String)] = []
    ) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 1 << 30)
        return (Int(response.status.code), Data(bytes.readableBytesView))
    }
}
