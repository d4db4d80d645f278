import Crypto
import Foundation
import HeraldIngest

/// The Web Push subscriptions Herald receives for (`STORE/serve/`, table `subscriptions`):
/// `POST /v1/admin/subscriptions` and `herald serve subscriptions`. Herald generates each
/// subscription's receiver keys (RFC 8291); the private key never leaves the table, and what
/// an application server needs (endpoint, `p256dh`, `auth`) can be listed again at any time.
/// A running server reads the table per request, so changes made here count at once. Every
/// method blocks.
public struct SubscriptionRegistry: Sendable {
    private let tables: ServiceTables

    /// A subscription as an application server needs it.
    public struct Subscription: Sendable, Hashable {
        /// The token in its endpoint, `/push/{token}`.
        public var token: String
        /// The account its pushes are stored for.
        public var account: String
        /// The format inside decrypted bodies.
        public var innerFormat: String
        /// The receiver's public key (uncompressed P-256 point), base64url: `keys.p256dh`.
        public var p256dh: String
        /// The 16-byte auth secret, base64url: `keys.auth`.
        public var auth: String
        /// The application server key pushes must be signed with (VAPID, RFC 8292), an
        /// uncompressed P-256 point in base64url, when the subscription is bound to one.
        public var vapidKey: String?
        /// Milliseconds since the epoch.
        public var createdAt: Int64
        /// The endpoint path.
        public var endpoint: String { "/push/\(token)" }
        /// The endpoint under `publicURL` (absolute), or its path when there is none.
        public func endpoint(under publicURL: PublicURL?) -> String { publicURL?.endpoint(token: token) ?? endpoint }
    }

    /// Opens the registry of the store at `storePath` (creating `STORE/serve/`).
    public init(storePath: String) throws {
        tables = try ServiceTables(storePath: storePath)
    }

    init(tables: ServiceTables) { self.tables = tables }

    /// The inner formats a subscription may name.
    public static var innerFormats: [String] { PayloadFormat.allCases.filter { $0 != .webpush }.map(\.rawValue) }

    /// Creates a subscription for `account` with fresh receiver keys, bound to the VAPID
    /// application server key `vapidKey` when given. Throws ``ServerError`` (400,
    /// `inner_format` or `vapid_key`) for an unknown inner format or a key that is not a
    /// P-256 public key.
    public func create(
        account: String, innerFormat: String = "herald", vapidKey: String? = nil, now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)
    ) throws -> Subscription {
        precondition(!account.isEmpty, "a subscription needs an account")
        guard let format = PayloadFormat(rawValue: innerFormat), format != .webpush else {
            throw ServerError.badRequest(field: "inner_format", "expected one of \(Self.innerFormats)")
        }
        if let vapidKey { _ = try VAPID.publicKey(vapidKey, field: "vapid_key") }
        let key = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        // Never one that starts with `-`: `herald serve subscriptions remove --token -…` would
        // read it as an option (1 token in 64 did).
        var token: String
        repeat { token = String(TokenAuthority.generate().dropFirst(4)) } while token.hasPrefix("-")
        let stored = WebPushSubscription(
            account: account, privateKey: Self.base64url(Array(key.rawRepresentation)), authSecret: Self.base64url(auth),
            innerFormat: format.rawValue, vapidKey: vapidKey, createdAt: now)
        try tables.put(.subscriptions, token, stored)
        return try Self.subscription(token: token, stored)
    }

    /// Every subscription, by token.
    public func all() throws -> [Subscription] {
        try tables.all(.subscriptions, as: WebPushSubscription.self).map { try Self.subscription(token: $0.key, $0.value) }
    }

    /// Removes the subscription with `token`; returns whether there was one.
    @discardableResult
    public func remove(token: String) throws -> Bool {
        try tables.remove(.subscriptions, token)
    }

    private static func subscription(token: String, _ stored: WebPushSubscription) throws -> Subscription {
        let keys = try WebPushKeys(privateKeyBase64url: stored.privateKey, authSecretBase64url: stored.authSecret)
        return Subscription(
            token: token, account: stored.account, innerFormat: stored.innerFormat, p256dh: base64url(keys.publicKey),
            auth: stored.authSecret, vapidKey: stored.vapidKey, createdAt: stored.createdAt)
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
