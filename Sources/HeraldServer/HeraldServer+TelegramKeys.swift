import HeraldEvents
import HeraldIngest
import HeraldReplication
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// The admin API for the Telegram auth keys that decrypt `format=telegram` pushes, so
    /// that keys are added and removed while serving (the CLI's `herald keys` needs the store
    /// to itself): `POST /v1/admin/keys` `{"key": "<base64url>", "account": "tg:1",
    /// "rebind": false}` adds one (409 when the key is bound to another account and `rebind`
    /// is not true), `GET /v1/admin/keys` lists ids and accounts (never the key bytes), and
    /// `DELETE /v1/admin/keys/{id}` removes one. A key without `account` decrypts pushes of
    /// any account, as with `herald keys add`.
    func addTelegramKeyRoutes(to admin: some RouterMethods<BasicRequestContext>) {
        admin.post("keys") { request, context in
            let document = try await self.jsonObject(request)
            guard case .string(let typed)? = document["key"] else {
                throw ServerError.badRequest(field: "key", "required: a 256-byte Telegram auth key, base64url")
            }
            var account = ""
            if let value = document["account"] {
                guard case .string(let name) = value else { throw ServerError.badRequest(field: "account", "must be a string") }
                account = name
            }
            var rebind = false
            if let value = document["rebind"] {
                guard case .bool(let flag) = value else { throw ServerError.badRequest(field: "rebind", "must be true or false") }
                rebind = flag
            }
            let key: TelegramKey
            do {
                key = try TelegramKey(base64url: typed, account: account)
            } catch {
                throw ServerError.badRequest(field: "key", "\(error)")
            }
            let stored = StoredKey(id: key.keyId, account: account, bytes: key.bytes)
            let added = try await self.host.run { [rebind] store in try Self.addKey(stored, rebind: rebind, to: store) }
            // Kept with the replicated log too, so that a replacement node has it.
            try await self.host.tables { try $0.replication?.writeService(put: [Self.replicatedKey(stored)]) }
            return JSONValue.object(["id": .int(key.keyId), "account": .string(account), "added": .bool(added)])
                .response(status: added ? .created : .ok)
        }
        admin.get("keys") { request, context in
            let keys = try await self.host.run { store in try store.keyring.all() }
            return JSONValue.object(["keys": .array(keys.map { key in
                .object(["id": .int(key.id), "account": .string(key.account)])
            })]).response()
        }
        admin.delete("keys/:id") { request, context in
            guard let id = Int64(try context.parameters.require("id")) else {
                throw ServerError.badRequest(field: "id", "must be a key id (a signed 64-bit integer)")
            }
            try await self.host.tables { try $0.replication?.writeService(put: [], remove: [(Self.telegramKeysTable, String(id))]) }
            guard try await self.host.run({ store in try store.keyring.remove(id: id) }) else {
                throw ServerError.notFound(field: "id", "no Telegram key \(id)")
            }
            return JSONValue.object(["removed": .int(id)]).response()
        }
    }

    /// ``Keyring/add(_:rebind:)``, a key bound to another account answered 409 naming it.
    static func addKey(_ key: StoredKey, rebind: Bool, to store: Store) throws -> Bool {
        do {
            return try store.keyring.add(key, rebind: rebind)
        } catch let error as StoreError where error.code == .keyBound {
            let bound = error.account ?? ""
            let owner = { (account: String) in account.isEmpty ? "any account" : account }
            throw ServerError(
                .conflict, field: "key",
                "Telegram key \(key.id) is bound to \(owner(bound)); pass \"rebind\": true to move it (its encrypted pushes would then be \(owner(key.account))'s)")
        }
    }
}
