import Foundation
import HeraldEvents
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// `/v1/admin/…`: tokens, snapshots, compaction and retention, in the group whose
    /// middleware asks for an `admin` token.
    func addAdminRoutes(to admin: some RouterMethods<BasicRequestContext>) {
        // {"name": "gateway", "scopes": ["ingest", "read:tg:1"]} → {"token": "hrd_…"}: the only
        // time the token is shown; only its SHA-256 is stored.
        admin.post("tokens") { request, context in
            let document = try await self.jsonObject(request)
            guard case .string(let name)? = document["name"], !name.isEmpty else {
                throw ServerError.badRequest(field: "name", "required: a name for the token")
            }
            guard case .array(let list)? = document["scopes"], !list.isEmpty else {
                throw ServerError.badRequest(field: "scopes", "required: a list such as [\"ingest\", \"read:tg:1\"]")
            }
            var scopes: [Scope] = []
            for (index, item) in list.enumerated() {
                guard case .string(let text) = item, let scope = Scope(text) else {
                    throw ServerError.badRequest(field: "scopes[\(index)]", "expected ingest, read:ACCOUNT, read:* or admin")
                }
                scopes.append(scope)
            }
            let token = try await self.host.tables { [tokens = self.tokens, scopes] _ in
                try tokens.create(name: name, scopes: scopes, now: Int64(Date().timeIntervalSince1970 * 1000))
            }
            self.logger.info("token created", metadata: ["name": "\(name)", "scopes": "\(scopes.map(\.description))"])
            return JSONValue.object([
                "name": .string(name), "scopes": .array(scopes.map { .string($0.description) }), "token": .string(token),
            ]).response(status: .created)
        }
        admin.delete("tokens/:name") { request, context in
            let name = try context.parameters.require("name")
            let removed = try await self.host.tables { [tokens = self.tokens] _ in try tokens.revoke(name: name) }
            guard removed > 0 else { throw ServerError.notFound(field: "name", "no stored token is named \"\(name)\"") }
            return JSONValue.object(["revoked": .int(removed)]).response()
        }
        admin.post("snapshot") { request, context in
            let seq = try await self.host.run { store in try store.snapshot() }
            self.logger.info("snapshot taken", metadata: ["seq": "\(seq)"])
            return JSONValue.object(["seq": .int(seq)]).response()
        }
        addMaintenanceRoutes(to: admin)
        addBackupRoute(to: admin)
    }

    /// The request body as a JSON object (400 naming `body` otherwise).
    func jsonObject(_ request: Request) async throws -> [String: JSONValue] {
        let bytes = try await body(of: request)
        guard let value = try? JSONParser.parse(bytes), case .object(let object) = value else {
            throw ServerError.badRequest(field: "body", "expected a JSON object")
        }
        return object
    }
}
