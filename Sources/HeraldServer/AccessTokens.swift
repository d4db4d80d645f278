import Crypto
import Foundation
import HeraldEvents
import HeraldConsole
import Hummingbird
import Synchronization

/// What a bearer token may do.
///
/// - `ingest`: `POST /v1/events`, `POST /v1/ingest`;
/// - `read:ACCOUNT` / `read:*`: the read endpoints of one account / of every account;
/// - `admin`: everything, including `/v1/admin/…`.
public enum Scope: Hashable, Sendable, CustomStringConvertible {
    case ingest
    case read(account: String)
    case admin

    /// Parses `ingest`, `read:ACCOUNT`, `read:*` or `admin`.
    public init?(_ text: String) {
        switch text {
        case "ingest": self = .ingest
        case "admin": self = .admin
        default:
            guard text.hasPrefix("read:"), text.count > 5 else { return nil }
            self = .read(account: String(text.dropFirst(5)))
        }
    }

    public var description: String {
        switch self {
        case .ingest: "ingest"
        case .admin: "admin"
        case .read(let account): "read:\(account)"
        }
    }

    /// Whether a token holding this scope may do what `needed` names.
    func grants(_ needed: Scope) -> Bool {
        switch (self, needed) {
        case (.admin, _): true
        case (.ingest, .ingest): true
        case (.read(let held), .read(let account)): held == "*" || held == account
        default: false
        }
    }
}

/// A token's stored form: never the token itself, only its SHA-256.
struct TokenRecord: ServiceDocument, Sendable, Hashable {
    var name: String
    var scopes: [String]
    /// Milliseconds since the epoch.
    var createdAt: Int64

    init(name: String, scopes: [String], createdAt: Int64) {
        self.name = name
        self.scopes = scopes
        self.createdAt = createdAt
    }

    init?(_ fields: [String: JSONValue]) {
        guard let name = fields["name"]?.string, let list = fields["scopes"]?.array, let createdAt = fields["createdAt"]?.integer
        else { return nil }
        let scopes = list.compactMap(\.string)
        guard scopes.count == list.count else { return nil }
        self.init(name: name, scopes: scopes, createdAt: createdAt)
    }

    var fields: [String: JSONValue] {
        ["name": .string(name), "scopes": .array(scopes.map { .string($0) }), "createdAt": .int(createdAt)]
    }
}

/// Checks bearer tokens against the hashes in the service tables (cached in memory, so a
/// check never touches the disk).
final class TokenAuthority: Sendable {
    private let tables: ServiceTables
    /// SHA-256 hex → record, for every stored token and the `HERALD_ADMIN_TOKEN` one.
    private let known: Mutex<[String: TokenRecord]>

    /// Loads the stored tokens; `adminToken` (from `HERALD_ADMIN_TOKEN`) is accepted as an
    /// admin token without being stored.
    /// Token buckets by token hash: `requestsPerSecond`, bursts of twice as many.
    private let buckets: TokenBuckets

    init(tables: ServiceTables, adminToken: String?, requestsPerSecond: Int = 0) throws {
        self.tables = tables
        buckets = TokenBuckets(rate: requestsPerSecond, burst: 2 * requestsPerSecond)
        var known = Dictionary(uniqueKeysWithValues: try tables.all(.tokens, as: TokenRecord.self).map { ($0.key, $0.value) })
        if let adminToken {
            known[Self.hash(adminToken)] = TokenRecord(name: "HERALD_ADMIN_TOKEN", scopes: ["admin"], createdAt: 0)
        }
        self.known = Mutex(known)
    }

    /// Reads the stored tokens again (a follower of a replicated log, whose tables the
    /// leader's changes replace), keeping `HERALD_ADMIN_TOKEN`'s.
    func reload() throws {
        let stored = try tables.all(.tokens, as: TokenRecord.self)
        known.withLock { known in
            let environment = known.filter { $0.value.name == "HERALD_ADMIN_TOKEN" && $0.value.createdAt == 0 }
            known = Dictionary(uniqueKeysWithValues: stored.map { ($0.key, $0.value) })
            known.merge(environment) { _, kept in kept }
        }
    }

    /// The SHA-256 of a token, in lowercase hex: the only form that is stored.
    static func hash(_ token: some StringProtocol) -> String {
        var hasher = SHA256()
        var token = String(token)
        token.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hex(hasher.finalize())
    }

    /// Lowercase hex of `bytes` (on every request: no `String(format:)`).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A new random token: `hrd_` and 32 random bytes in base64url.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "hrd_" + base64
    }

    /// Whether any stored or configured token has the admin scope.
    var hasAdmin: Bool { known.withLock { $0.values.contains { $0.scopes.contains("admin") } } }

    /// Creates and stores a token; returns it (the only time it is ever seen). Blocks.
    func create(name: String, scopes: [Scope], now: Int64) throws -> String {
        let token = Self.generate()
        let record = TokenRecord(name: name, scopes: scopes.map(\.description), createdAt: now)
        let hash = Self.hash(token)
        try tables.put(.tokens, hash, record)
        known.withLock { $0[hash] = record }
        return token
    }

    /// Removes every token named `name`; returns how many. Blocks.
    func revoke(name: String) throws -> Int {
        let hashes = known.withLock { $0.filter { $0.value.name == name && $0.value.createdAt != 0 }.map(\.key) }
        for hash in hashes { try tables.remove(.tokens, hash) }
        known.withLock { for hash in hashes { $0[hash] = nil } }
        return hashes.count
    }

    /// The token of an `Authorization: Bearer TOKEN` header (scheme in any case, blanks
    /// around the token ignored), read on the UTF-8 bytes: this runs on every request, and
    /// Foundation's `lowercased()` and `trimmingCharacters(in:)` cost more than the rest of it.
    static func bearerToken(_ header: String) -> Substring? {
        let scheme = "bearer ".utf8
        let utf8 = header.utf8
        guard utf8.count > scheme.count,
            zip(utf8, scheme).allSatisfy({ $0.0 | 0x20 == $0.1 })
        else { return nil }
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let rest = header.dropFirst(scheme.count)
        let token = rest.drop(while: isBlank)
        let trimmed = token[..<(token.lastIndex(where: { !isBlank($0) }).map(token.index(after:)) ?? token.startIndex)]
        return trimmed.isEmpty ? nil : trimmed
    }

    /// What `token` may read in the console: every account (`read:*`, `admin`), the accounts
    /// of its `read:A` scopes, or `nil` (unknown, or no read scope). Blocks never.
    func consoleGrant(_ token: String) -> ConsoleAccess.Grant? {
        guard let record = known.withLock({ $0[Self.hash(token)] }) else { return nil }
        var grant = ConsoleAccess.Grant(everything: false, accounts: [])
        for scope in record.scopes.compactMap(Scope.init) {
            switch scope {
            case .admin: grant.everything = true
            case .read(let account) where account == "*": grant.everything = true
            case .read(let account): grant.accounts.insert(account)
            case .ingest: break
            }
        }
        return grant.everything || !grant.accounts.isEmpty ? grant : nil
    }

    /// Returns when `request` carries a known bearer token that grants `needed` and is under
    /// its rate limit. Throws 401 without a (known) token, 403 when its scopes do not grant
    /// `needed`, 429 over the rate. ``TokenMiddleware`` calls it for each route group.
    func authorize(_ request: Request, _ needed: Scope) throws {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header) else {
            var error = ServerError(.unauthorized, field: "Authorization", "a bearer token is required")
            error.headers[.wwwAuthenticate] = "Bearer"
            throw error
        }
        guard let record = known.withLock({ $0[Self.hash(token)] }) else {
            var error = ServerError(.unauthorized, field: "Authorization", "unknown token")
            error.headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
            throw error
        }
        guard record.scopes.compactMap(Scope.init).contains(where: { $0.grants(needed) }) else {
            throw ServerError(.forbidden, field: "Authorization", "token \"\(record.name)\" lacks the scope \(needed)")
        }
        if buckets.isLimiting, let wait = buckets.take(Self.hash(token)) {
            var error = ServerError(.tooManyRequests, field: "Authorization", "token \"\(record.name)\" is over \(Int(buckets.rate)) requests per second")
            error.headers[.retryAfter] = "\(wait)"
            throw error
        }
    }
}
