import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// The Matrix Push Gateway API (`POST /_matrix/push/v1/notify`), so that a homeserver's
    /// pusher can point at Herald, and the admin API that registers pushkeys.
    ///
    /// The protocol authenticates by pushkey, so the endpoint takes no bearer token: each
    /// device's `pushkey` must have been registered to an account (`POST /v1/admin/pushkeys`).
    /// The notification is stored once per account its registered devices belong to (durably,
    /// before the answer); devices whose pushkey is not registered are listed in `rejected`,
    /// as Sygnal does, so the homeserver removes those pushers.
    func addMatrixRoutes(to router: Router<BasicRequestContext>, admin: some RouterMethods<BasicRequestContext>) {
        router.post("/_matrix/push/v1/notify") { request, context in
            try await self.matrixNotify(request)
        }
        // {"pushkey": "…", "account": "mx:@alice:example.org", "app_id": "…"} registers;
        // DELETE /v1/admin/pushkeys/{pushkey} removes; GET lists.
        admin.post("pushkeys") { request, context in
            let document = try await self.jsonObject(request)
            guard case .string(let pushkey)? = document["pushkey"], !pushkey.isEmpty, pushkey.utf8.count <= 512 else {
                throw ServerError.badRequest(field: "pushkey", "required: 1 to 512 bytes")
            }
            guard case .string(let account)? = document["account"], !account.isEmpty else {
                throw ServerError.badRequest(field: "account", "required")
            }
            var appId: String? = nil
            if case .string(let id)? = document["app_id"] { appId = id }
            let registration = Registration(account: account, appId: appId)
            try await self.host.tables { try $0.put(.pushkeys, pushkey, registration) }
            return JSONValue.object(["pushkey": .string(pushkey), "account": .string(account)]).response(status: .created)
        }
        admin.get("pushkeys") { request, context in
            let all = try await self.host.tables { try $0.all(.pushkeys, as: Registration.self) }
            return JSONValue.object(["pushkeys": .array(all.map { entry in
                var item: [String: JSONValue] = ["pushkey": .string(entry.key), "account": .string(entry.value.account)]
                if let appId = entry.value.appId { item["app_id"] = .string(appId) }
                return .object(item)
            })]).response()
        }
        admin.delete("pushkeys/:pushkey") { request, context in
            let raw = try context.parameters.require("pushkey")
            let pushkey = raw.removingPercentEncoding ?? raw
            guard try await self.host.tables({ try $0.remove(.pushkeys, pushkey) }) else {
                throw ServerError.notFound(field: "pushkey", "not registered")
            }
            return JSONValue.object(["removed": .string(pushkey)]).response()
        }
    }

    /// The largest Matrix notify body accepted: a notify carries one event (the Matrix spec
    /// caps an event at 65,536 bytes) with its counts and devices, so twice that is ample.
    static let maxMatrixNotifyBytes = 128 << 10

    /// `POST /_matrix/push/v1/notify` (413 over ``maxMatrixNotifyBytes``; 429 when a
    /// registered pushkey of it is over its rate limit, before anything is stored).
    func matrixNotify(_ request: Request) async throws -> Response {
        let body = try await body(of: request, limit: Self.maxMatrixNotifyBytes)
        guard let document = try? JSONParser.parse(body),
            case .object(let root) = document, case .object(let notification)? = root["notification"]
        else {
            throw ServerError.badRequest(field: "notification", "expected {\"notification\": {…}}")
        }
        guard case .array(let devices)? = notification["devices"] else {
            throw ServerError.badRequest(field: "notification.devices", "required: a list of devices")
        }
        var pushkeys: [String] = []
        var appIds: [String?] = []
        for (index, device) in devices.enumerated() {
            guard case .object(let fields) = device, case .string(let pushkey)? = fields["pushkey"] else {
                throw ServerError.badRequest(field: "notification.devices[\(index)].pushkey", "required")
            }
            pushkeys.append(pushkey)
            if case .string(let appId)? = fields["app_id"] { appIds.append(appId) } else { appIds.append(nil) }
        }
        // A pushkey registered with an app_id counts only for that app, as Sygnal keys pushers.
        let registered = try await host.tables { [pushkeys, appIds] tables in
            try zip(pushkeys, appIds).map { pushkey, appId -> Registration? in
                guard let registration = try tables.get(.pushkeys, pushkey, as: Registration.self) else { return nil }
                if let expected = registration.appId, expected != appId { return nil }
                return registration
            }
        }
        for (pushkey, registration) in zip(pushkeys, registered) where registration != nil {
            try limitEndpoint(pushkey, counter: metrics.matrixRateLimited, what: "a pushkey of this notify")
        }
        let rejected = zip(pushkeys, registered).filter { $0.1 == nil }.map(\.0)
        var accounts: [String] = []
        for registration in registered.compactMap({ $0 }) where !accounts.contains(registration.account) {
            accounts.append(registration.account)
        }
        var plan = IngestPlan(format: "matrix", account: nil)
        for account in accounts {
            let part = IngestPlan.decode([(1, body)], format: .matrix, context: IngestContext(account: account, receivedAt: Self.nowSeconds()))
            if let bad = part.rejected.first {
                // The body itself is wrong: quarantine it (once) and tell the homeserver.
                var quarantine = part
                quarantine.account = account
                quarantine.format = "matrix"
                _ = try await host.commit(quarantine, quarantine: true, metrics: metrics)
                throw ServerError.badRequest(field: bad.field, bad.reason)
            }
            plan.batch += part.batch
        }
        if !plan.batch.isEmpty { _ = try await host.commit(plan, quarantine: false, metrics: metrics) }
        if !rejected.isEmpty {
            metrics.rejectedPushkeys.increment(by: Int64(rejected.count))
            logger.info("matrix notify: unregistered pushkeys", metadata: ["count": "\(rejected.count)"])
        }
        return JSONValue.object(["rejected": .array(rejected.map { .string($0) })]).response()
    }
}
