import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// `/v1/accounts/{account}/…`: state, active notifications, counts and the update
    /// stream, in the group whose middleware asks for `read:ACCOUNT` or `read:*`.
    func addAccountReadRoutes(to account: some RouterMethods<BasicRequestContext>) {
        account.get("state") { _, context in
            let account = try Self.pathAccount(context)
            let json = try await self.host.run { store -> String? in
                let projection = store.projection
                return projection.account(account) == nil ? nil : projection.stateJSON(accounts: account)
            }
            guard let json else { throw Self.unknownAccount(account) }
            return Response.json(Array(json.utf8))
        }
        account.get("active") { _, context in
            let account = try Self.pathAccount(context)
            let json = try await self.host.run { store -> String? in
                let projection = store.projection
                return projection.account(account) == nil ? nil : projection.activeNotificationsJSON(account: account)
            }
            guard let json else { throw Self.unknownAccount(account) }
            return Response.json(Array(json.utf8))
        }
        account.get("counts") { _, context in
            let account = try Self.pathAccount(context)
            let found = try await self.host.run { store in (store.account(account), store.lastSeq) }
            guard let state = found.0 else { throw Self.unknownAccount(account) }
            return Response.json(Self.countsJSON(state, seq: found.1))
        }
        account.get("updates") { request, context in
            try await self.updateStream(request, account: try Self.pathAccount(context))
        }
    }

    /// `GET /v1/audit`, in the group whose middleware asks for `read:` the account the query
    /// names.
    func addAuditRoute(to routes: some RouterMethods<BasicRequestContext>) {
        routes.get("/v1/audit") { request, _ in
            try await self.audit(account: try Self.auditAccount(request), query: request.uri.queryParameters)
        }
    }

    /// `GET /v1/stats`, in the group whose middleware asks for `read:*`.
    func addStatsRoute(to routes: some RouterMethods<BasicRequestContext>) {
        routes.get("/v1/stats") { _, _ in
            let stats = try await self.host.run { store in try store.statistics() }
            return Response.json(Self.statsJSON(stats))
        }
    }

    /// The `account` query parameter of `/v1/audit` (400 without one).
    static func auditAccount(_ request: Request) throws -> String {
        guard let account = request.uri.queryParameters.get("account"), !account.isEmpty else {
            throw ServerError.badRequest(field: "account", "required")
        }
        return account
    }

    static func unknownAccount(_ account: String) -> ServerError {
        .notFound(field: "account", "no event names account \"\(account)\"")
    }

    /// `{"seq", "account", "clock", "unread": {unread, badge, unreadMentions}, "chats": [...]}`:
    /// the clock, counts and chats of the state form (STATE.md), without the groups. The
    /// clock is what a chat's `muted` and the `badge` are reckoned at (SEMANTICS 1.2 §2).
    static func countsJSON(_ state: AccountState, seq: UInt64) -> [UInt8] {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("seq"); writer.int(seq)
        writer.key("account"); writer.string(state.name)
        writer.key("clock"); writer.int(state.clock)
        writer.key("unread"); state.unread.writeJSON(to: &writer)
        writer.key("chats")
        writer.arrayStart()
        for chat in state.chats { chat.writeJSON(to: &writer) }
        writer.arrayEnd()
        writer.objectEnd()
        return writer.bytes
    }

    /// The form of `herald stats --json` (schema/stats.schema.json).
    static func statsJSON(_ stats: Store.Statistics) -> [UInt8] { Array(stats.jsonString.utf8) }

    /// `GET /v1/audit?account=A&chat=C[&object=ID] | &notification=N | &group=G`: JSONL, one
    /// line per event that touched the target, as `herald audit --json` prints.
    func audit(account: String, query: Parameters) async throws -> Response {
        let target: AuditTrail.Target
        if let chat = query.get("chat") {
            var object: Int64? = nil
            if let text = query.get("object") {
                guard let id = Int64(text) else { throw ServerError.badRequest(field: "object", "must be an integer") }
                object = id
            }
            target = .object(chat: chat, objectId: object)
        } else if let text = query.get("notification") {
            guard let id = Int64(text) else { throw ServerError.badRequest(field: "notification", "must be an integer") }
            target = .notification(id)
        } else if let text = query.get("group") {
            guard let id = Int64(text) else { throw ServerError.badRequest(field: "group", "must be an integer") }
            target = .group(id)
        } else {
            throw ServerError.badRequest(field: "chat", "one of chat (with object), notification or group is required")
        }
        let all = query.get("all") == "true"
        let report = try await host.run { store -> Store.AuditReport? in
            guard store.account(account) != nil else { return nil }
            return try store.auditReport(account: account, target: target, listingUnchanged: all)
        }
        guard let report else { throw Self.unknownAccount(account) }
        var bytes: [UInt8] = []
        for line in report.jsonLines(all: all) { bytes += Array(line.utf8) + [0x0A] }
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody(byteBuffer: buffer))
    }
}
