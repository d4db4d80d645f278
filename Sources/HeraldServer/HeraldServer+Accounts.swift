import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore
import Hummingbird

extension HeraldServer {
    /// `/v1/admin/accounts/{a}/…` and `/v1/admin/routes`: what `herald move-account` uses to
    /// move one account between instances (export, import, fence, registrations, purge) and
    /// the HAProxy map files of the push endpoints, in the admin group.
    func addAccountRoutes(to admin: some RouterMethods<BasicRequestContext>) {
        // The account's records after `after` (at most `limit`), as `herald export` lines.
        admin.get("accounts/:account/export") { request, context in
            let account = try Self.pathAccount(context)
            let query = request.uri.queryParameters
            let after = query.get("after").flatMap { UInt64($0) } ?? 0
            let limit = max(1, query.get("limit").flatMap { Int($0) } ?? 10_000)
            let lines = try await self.host.run { store in
                var writer = JSONWriter()
                var body: [UInt8] = []
                var count = 0
                try store.history.forEach(from: after + 1) { record in
                    guard record.event.account.isSameName(as: account) else { return true }
                    writer.reset()
                    record.writeExportLine(to: &writer)
                    body += writer.bytes
                    body.append(UInt8(ascii: "\n"))
                    count += 1
                    return count < limit
                }
                return body
            }
            return Response.text(lines, contentType: "application/x-ndjson")
        }
        // Export lines of this account from another instance, appended here with new seqs
        // (format and digest kept); all or nothing. Honours Idempotency-Key.
        admin.post("accounts/:account/import") { request, context in
            let account = try Self.pathAccount(context)
            let body = try await self.body(of: request)
            var batch: [(Event, Source)] = []
            for (index, line) in body.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
                let parsed: ExportLine
                do {
                    parsed = try ExportLine(line)
                } catch let error as EventError {
                    throw ServerError.badRequest(field: "line \(index + 1): \(error.field)", error.reason)
                }
                guard parsed.event.account.isSameName(as: account) else {
                    throw ServerError.badRequest(field: "line \(index + 1): account", "is \(parsed.event.account), not \(account)")
                }
                batch.append((parsed.event, parsed.source))
            }
            let events = batch
            let reply: @Sendable ([UInt64]) -> StoredReply = { seqs in
                StoredReply(.object(["imported": .int(seqs.count), "lastSeq": .int(seqs.last ?? 0)]))
            }
            return try await self.idempotency.answer(
                request, endpoint: "/v1/admin/accounts/import", body: body, digests: Set(events.compactMap { $0.1.digest }),
                expected: events.count, recovered: reply
            ) {
                reply(try await self.host.append(events).map { Array($0) } ?? [])
            }
        }
        // Refuse the account's appends (503 + Retry-After), persistently, and answer once
        // every append queued before has finished. {"movedTo": URL} is optional.
        admin.post("accounts/:account/fence") { request, context in
            let account = try Self.pathAccount(context)
            let document = (try? await self.jsonObject(request)) ?? [:]
            var movedTo: String?
            if case .string(let target)? = document["movedTo"] { movedTo = target }
            let fence = Fence(movedTo: movedTo, since: Int64(Date().timeIntervalSince1970 * 1000))
            let fenced = try await self.host.tables { tables in
                try tables.put(.fences, account, fence)
                return Set(try tables.all(.fences, as: Fence.self).map(\.key))
            }
            try await self.host.setFenced(fenced)
            let last = try await self.host.run { store in store.lastSeq }
            self.logger.notice("account fenced", metadata: ["account": "\(account)", "movedTo": "\(movedTo ?? "")"])
            return JSONValue.object(["fenced": .string(account), "lastSeq": .int(last)]).response()
        }
        admin.delete("accounts/:account/fence") { request, context in
            let account = try Self.pathAccount(context)
            let fenced = try await self.host.tables { tables in
                try tables.remove(.fences, account)
                return Set(try tables.all(.fences, as: Fence.self).map(\.key))
            }
            try await self.host.setFenced(fenced)
            self.logger.notice("account fence lifted", metadata: ["account": "\(account)"])
            return JSONValue.object(["unfenced": .string(account)]).response()
        }
        // The account's pushkeys and Web Push subscriptions (keys included), to copy them.
        admin.get("accounts/:account/registrations") { request, context in
            let account = try Self.pathAccount(context)
            var registrations = try await self.host.tables { tables in try AccountRegistrations(account: account, in: tables) }
            registrations.telegramKeys = try await self.host.run { store in
                try store.keyring.all().filter { $0.account.isSameName(as: account) }.map { try AccountRegistrations.TelegramKeyForm($0) }
            }
            return registrations.json.response()
        }
        admin.post("accounts/:account/registrations") { request, context in
            let account = try Self.pathAccount(context)
            let body = try await self.body(of: request)
            guard case .object(let fields)? = try? JSONParser.parse(body), let registrations = AccountRegistrations(fields) else {
                throw ServerError.badRequest(field: "body", "expected the form of GET …/registrations")
            }
            try registrations.check(account: account)
            let keys = try (registrations.telegramKeys ?? []).map { try $0.storedKey() }
            try await self.host.tables { tables in try registrations.store(in: tables) }
            try await self.host.run { store in
                for key in keys { _ = try Self.addKey(key, rebind: false, to: store) }
            }
            return JSONValue.object([
                "pushkeys": .int(registrations.pushkeys.count), "subscriptions": .int(registrations.subscriptions.count),
                "telegramKeys": .int(keys.count),
            ]).response()
        }
        // Removes the account from this instance: its records (store purge, with the store
        // closed, as compaction does) and its registrations. `?dry_run=true` only counts.
        admin.post("accounts/:account/purge") { request, context in
            let account = try Self.pathAccount(context)
            let dryRun = request.uri.queryParameters.get("dry_run") == "true"
            let options = self.configuration.storeOptions
            let report: PurgeReport
            if dryRun {
                report = try await self.host.run { store in try StoreMaintenance(path: store.path, options: options).purge(account: account, dryRun: true) }
            } else {
                report = try await self.host.withStoreClosed { path in try StoreMaintenance(path: path, options: options).purge(account: account) }
                try await self.host.tables { tables in try AccountRegistrations(account: account, in: tables).remove(from: tables) }
                self.logger.notice("account purged", metadata: ["account": "\(account)", "records": "\(report.recordsRemoved)"])
            }
            return JSONValue.object([
                "account": .string(account), "dryRun": .bool(dryRun),
                "recordsRemoved": .int(report.recordsRemoved + report.archivedRecordsRemoved),
            ]).response()
        }
        // HAProxy map files: `?map=pushkeys` (pushkey → account) or `?map=subscriptions`
        // (subscription token → account), one `KEY ACCOUNT` line each.
        admin.get("routes") { request, context in
            let map = request.uri.queryParameters.get("map") ?? "pushkeys"
            guard map == "pushkeys" || map == "subscriptions" else {
                throw ServerError.badRequest(field: "map", "expected pushkeys or subscriptions")
            }
            let lines = try await self.host.tables { tables -> String in
                let entries: [(String, String)] = map == "pushkeys"
                    ? try tables.all(.pushkeys, as: Registration.self).map { ($0.key, $0.value.account) }
                    : try tables.all(.subscriptions, as: WebPushSubscription.self).map { ($0.key, $0.value.account) }
                return entries.map { "\($0.0) \($0.1)\n" }.joined()
            }
            return Response.text(Array(lines.utf8), contentType: "text/plain; charset=utf-8")
        }
    }
}

/// One account's pushkeys and Web Push subscriptions, as `GET …/registrations` sends them.
struct AccountRegistrations: Sendable {
    var pushkeys: [String: Registration] = [:]
    var subscriptions: [String: WebPushSubscription] = [:]
    /// The Telegram auth keys bound to the account (absent from older senders).
    var telegramKeys: [TelegramKeyForm]?

    /// The form `GET …/registrations` sends: each table's members as the service tables
    /// store them (`schema/serve-tables.md`), by key.
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "pushkeys": .object(pushkeys.mapValues { .object($0.fields) }),
            "subscriptions": .object(subscriptions.mapValues { .object($0.fields) }),
        ]
        if let telegramKeys {
            fields["telegramKeys"] = .array(telegramKeys.map { .object(["account": .string($0.account), "key": .string($0.key)]) })
        }
        return .object(fields)
    }

    /// The registrations of the form ``json`` writes; `nil` when it is not that form.
    init?(_ fields: [String: JSONValue]) {
        func table<Value: ServiceDocument>(_ name: String) -> [String: Value]? {
            guard let members = fields[name]?.object else { return fields[name] == nil ? [:] : nil }
            let values = members.compactMapValues { $0.object.flatMap(Value.init) }
            return values.count == members.count ? values : nil
        }
        guard let pushkeys: [String: Registration] = table("pushkeys"),
            let subscriptions: [String: WebPushSubscription] = table("subscriptions")
        else { return nil }
        self.pushkeys = pushkeys
        self.subscriptions = subscriptions
        if let list = fields["telegramKeys"], !list.isNull {
            let keys = (list.array ?? []).compactMap { item -> TelegramKeyForm? in
                guard let account = item.object?["account"]?.string, let key = item.object?["key"]?.string else { return nil }
                return TelegramKeyForm(account: account, key: key)
            }
            guard keys.count == list.array?.count else { return nil }
            telegramKeys = keys
        }
    }

    /// A Telegram auth key as a move carries it: the key, base64url, and its account.
    struct TelegramKeyForm: Sendable {
        var account: String
        var key: String

        init(account: String, key: String) {
            self.account = account
            self.key = key
        }

        init(_ stored: StoredKey) throws {
            account = stored.account
            key = try TelegramKey(bytes: stored.bytes).base64url
        }

        /// The key to store, checked (400 naming `telegramKeys` when it is not a key).
        func storedKey() throws -> StoredKey {
            do {
                let parsed = try TelegramKey(base64url: key, account: account)
                return StoredKey(id: parsed.keyId, account: account, bytes: parsed.bytes)
            } catch {
                throw ServerError.badRequest(field: "telegramKeys", "\(error)")
            }
        }
    }

    /// The registrations of `account` in `tables`.
    init(account: String, in tables: ServiceTables) throws {
        for (key, value) in try tables.all(.pushkeys, as: Registration.self) where value.account.isSameName(as: account) {
            pushkeys[key] = value
        }
        for (key, value) in try tables.all(.subscriptions, as: WebPushSubscription.self) where value.account.isSameName(as: account) {
            subscriptions[key] = value
        }
    }

    /// 400 unless every registration names `account`.
    func check(account: String) throws {
        let accounts = pushkeys.values.map(\.account) + subscriptions.values.map(\.account) + (telegramKeys ?? []).map(\.account)
        if let other = accounts.first(where: { !$0.isSameName(as: account) }) {
            throw ServerError.badRequest(field: "account", "a registration names \(other), not \(account)")
        }
    }

    func store(in tables: ServiceTables) throws {
        for (key, value) in pushkeys { try tables.put(.pushkeys, key, value) }
        for (key, value) in subscriptions { try tables.put(.subscriptions, key, value) }
    }

    func remove(from tables: ServiceTables) throws {
        for key in pushkeys.keys { try tables.remove(.pushkeys, key) }
        for key in subscriptions.keys { try tables.remove(.subscriptions, key) }
    }
}
