import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore
import HTTPTypes
import Hummingbird

extension HeraldServer {
    /// `POST /v1/events` and `POST /v1/ingest`, in a group whose middleware asks for an
    /// `ingest` token.
    func addIngestRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        routes.post("/v1/events") { request, _ in try await self.events(request) }
        routes.post("/v1/ingest") { request, _ in try await self.ingest(request) }
    }

    /// The body, up to `limit` (default: the configured limit; 413 above it).
    func body(of request: Request, limit: Int? = nil) async throws -> [UInt8] {
        let limit = limit ?? configuration.maxBodyBytes
        // A declared length over the limit is refused before a byte of the body is read.
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            throw ServerError(.contentTooLarge, field: "body", "larger than \(limit) bytes")
        }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ServerError(.contentTooLarge, field: "body", "larger than \(limit) bytes")
        }
    }

    /// Canonical events (SEMANTICS §1): a JSON event, a JSON array of events, or JSONL. All
    /// or nothing: one bad event is a 400 naming it and its field, and nothing is stored.
    func events(_ request: Request) async throws -> Response {
        let body = try await body(of: request)
        let wholeDocument = request.headers[.contentType]?.hasPrefix("application/json") ?? false
        let payloads = try IngestPlan.payloads(of: body, wholeDocument: wholeDocument)
        guard !payloads.isEmpty else { throw ServerError.badRequest(field: "body", "no events") }
        let plan = IngestPlan.decode(payloads, format: .herald, context: IngestContext(receivedAt: Self.nowSeconds()))
        if let bad = plan.rejected.first {
            var error = ServerError.badRequest(field: bad.field, bad.reason)
            error.details["line"] = .int(bad.line)
            throw error
        }
        // Behind a router partitioning by account (Tools/haproxy.cfg), the header it routed on
        // must name every event's account, or events would land on another account's instance.
        if let routed = request.headers[Self.accountHeader],
            let (index, other) = plan.batch.enumerated().first(where: { !$0.element.0.account.isSameName(as: routed) }).map({ ($0.offset, $0.element.0.account) })
        {
            throw ServerError.badRequest(field: "events[\(index)].account", "is \(other), but X-Herald-Account routed the request as \(routed)")
        }
        let recovered: @Sendable ([UInt64]) -> StoredReply = { seqs in StoredReply(.object(["seqs": .array(seqs.map { .int($0) })])) }
        return try await idempotency.answer(
            request, endpoint: "/v1/events", body: body, digests: plan.digests, expected: plan.batch.count,
            recovered: recovered
        ) {
            let (seqs, _) = try await self.host.commit(plan, quarantine: false, metrics: self.metrics)
            return recovered(seqs)
        }
    }

    /// Raw payloads, one per line, in `format` (default `auto`: detected per payload), for
    /// `account` when they do not name one. Valid payloads are appended (one commit); bad ones
    /// go to the quarantine and are listed in `rejected`. 422 when every payload was bad.
    func ingest(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        let formatName = query.get("format") ?? "auto"
        var format: PayloadFormat? = nil
        if formatName != "auto" {
            guard let named = PayloadFormat(rawValue: formatName) else {
                throw ServerError.badRequest(
                    field: "format", "unknown format \"\(formatName)\"; expected auto, \(PayloadFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            format = named
        }
        if format == .webpush {
            throw ServerError.badRequest(field: "format", "Web Push bodies are posted to /push/{token}, which holds the subscription's keys")
        }
        let account = query.get("account")
        if let account, account.isEmpty { throw ServerError.badRequest(field: "account", "must not be empty") }
        if format == .rongcloud, let problem = RongCloudAccount.problem(account) {
            throw ServerError.badRequest(field: "account", "format rongcloud: \(problem)")
        }
        let body = try await body(of: request)
        let payloads = try IngestPlan.payloads(of: body, wholeDocument: false)
        guard !payloads.isEmpty else { throw ServerError.badRequest(field: "body", "no payloads") }
        let telegramKeys = try await host.run { store in
            try store.keyring.all().compactMap { try? TelegramKey(bytes: $0.bytes, account: $0.account) }
        }
        var plan = IngestPlan.decode(
            payloads, format: format, context: IngestContext(account: account, receivedAt: Self.nowSeconds(), telegramKeys: telegramKeys))
        plan.format = formatName
        let finalPlan = plan
        let reply: @Sendable ([UInt64], [UInt64]) -> StoredReply = { seqs, quarantined in
            let rejected: [JSONValue] = finalPlan.rejected.enumerated().map { index, rejection in
                var entry: [String: JSONValue] = ["line": .int(rejection.line), "reason": .string(rejection.reason)]
                if !rejection.field.isEmpty { entry["field"] = .string(rejection.field) }
                if index < quarantined.count { entry["quarantine"] = .int(quarantined[index]) }
                return .object(entry)
            }
            var document: [String: JSONValue] = ["seqs": .array(seqs.map { .int($0) }), "rejected": .array(rejected)]
            guard finalPlan.batch.isEmpty, let first = finalPlan.rejected.first else { return StoredReply(.object(document)) }
            var error: [String: JSONValue] = ["reason": .string(first.reason), "line": .int(first.line)]
            if !first.field.isEmpty { error["field"] = .string(first.field) }
            document["error"] = .object(error)
            return StoredReply(status: .unprocessableContent, .object(document))
        }
        return try await idempotency.answer(
            request, endpoint: "/v1/ingest", body: body, digests: plan.digests, expected: plan.batch.count,
            recovered: { seqs in reply(seqs, []) }
        ) {
            let (seqs, quarantined) = try await self.host.commit(finalPlan, quarantine: true, metrics: self.metrics)
            return reply(seqs, quarantined)
        }
    }

    /// `X-Herald-Account`: the account a partitioning router routes `POST /v1/events` by.
    static let accountHeader = HTTPField.Name("X-Herald-Account")!

    /// Now, in Unix seconds (the receive time of payloads without a date).
    static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
