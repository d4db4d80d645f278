import Crypto
import Foundation
import HTTPTypes
import HeraldEvents

/// VAPID (RFC 8292): the check that a push to a subscription bound to an application
/// server key was sent by the holder of that key.
///
/// The push carries `Authorization: vapid t=JWT, k=KEY` (RFC 8292 §3), or the older form of
/// the drafts that pywebpush and some libraries still send, `Authorization: WebPush JWT` with
/// `Crypto-Key: p256ecdsa=KEY`. The JWT must be ES256 (raw r‖s signature), verify under
/// `KEY`, name the endpoint's origin as `aud`, and expire (`exp`) in the future and at most
/// 24 hours (plus ``clockSkewSeconds``) ahead; `sub` is optional. A malformed, unsigned,
/// expired or misaddressed token is 401; a valid token signed by another key than the bound
/// one is 403.
enum VAPID {
    /// How far ahead `exp` may be (RFC 8292 §2: no more than 24 hours from the request).
    static let maxLifetimeSeconds: Int64 = 86_400
    /// Slack for a sender whose clock runs ahead of ours, on the 24-hour bound only.
    static let clockSkewSeconds: Int64 = 300

    /// `key` (an uncompressed P-256 point, base64url) as a signing public key; throws
    /// ``ServerError`` (400, naming `field`) otherwise.
    static func publicKey(_ key: String, field: String) throws -> P256.Signing.PublicKey {
        guard let (_, publicKey) = decodeKey(key) else {
            throw ServerError.badRequest(field: field, "expected an uncompressed P-256 public key (65 bytes, base64url), as a browser's applicationServerKey")
        }
        return publicKey
    }

    /// The bytes and the key of an uncompressed P-256 point in base64url, or `nil`.
    private static func decodeKey(_ key: String) -> (bytes: [UInt8], key: P256.Signing.PublicKey)? {
        guard let bytes = base64urlDecode(key), bytes.count == 65, bytes.first == 4,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: bytes)
        else { return nil }
        return (bytes, publicKey)
    }

    /// Checks the VAPID credentials of a push to a subscription bound to `boundKey`, whose
    /// endpoint's origin is one of `audiences`, at `now` (seconds since the epoch). Throws
    /// ``ServerError`` 401 or 403 with the reason.
    static func check(
        authorization: String?, cryptoKey: String?, boundKey: String, audiences: [String], now: Int64
    ) throws(ServerError) {
        guard let authorization, !authorization.isEmpty else {
            throw refusal(.unauthorized, "missing: this subscription is bound to an application server key; send Authorization: vapid t=JWT, k=KEY (RFC 8292)")
        }
        let (token, key) = try credentials(authorization: authorization, cryptoKey: cryptoKey)
        guard let (keyBytes, publicKey) = decodeKey(key) else {
            throw refusal(.unauthorized, "k is not an uncompressed P-256 public key in base64url")
        }
        let claims = try verifiedClaims(token, publicKey: publicKey)
        guard case .string(let audience)? = claims["aud"] else { throw refusal(.unauthorized, "the token has no aud claim") }
        guard let origin = Self.origin(audience: audience), audiences.contains(origin) else {
            throw refusal(.unauthorized, "aud \"\(audience)\" is not this endpoint's origin (\(audiences.joined(separator: " or ")))")
        }
        // An integer; one past Int64 is clamped to its largest (and then refused as too far ahead).
        guard case .number? = claims["exp"], let expiry = claims["exp"]?.integer ?? claims["exp"]?.unsigned.map({ _ in .max }) else {
            throw refusal(.unauthorized, "the token has no exp claim (a number of seconds since the epoch)")
        }
        guard expiry > now else { throw refusal(.unauthorized, "the token expired at \(expiry), \(now - expiry) s ago") }
        guard expiry <= now + maxLifetimeSeconds + clockSkewSeconds else {
            throw refusal(.unauthorized, "exp is \(expiry - now) s ahead; RFC 8292 allows at most 24 hours")
        }
        switch claims["sub"] {
        case nil, .string?: break
        default: throw refusal(.unauthorized, "sub must be a string (mailto: or https: contact)")
        }
        guard let bound = base64urlDecode(boundKey), bound == keyBytes else {
            throw refusal(.forbidden, "the token is signed by another application server key than the one this subscription is bound to")
        }
    }

    /// `aud` as an origin (a trailing slash allowed, no path, query or fragment), or `nil`.
    static func origin(audience: String) -> String? {
        let bare = audience.hasSuffix("/") ? String(audience.dropLast()) : audience
        guard let separator = bare.range(of: "://"), !bare[separator.upperBound...].contains(where: { "/?#".contains($0) }) else {
            return nil
        }
        return PublicURL.origin(bare)
    }

    /// The JWT and the key of `Authorization: vapid t=…, k=…`, or of `Authorization: WebPush
    /// JWT` with `Crypto-Key: p256ecdsa=…`.
    private static func credentials(authorization: String, cryptoKey: String?) throws(ServerError) -> (token: String, key: String) {
        let trimmed = authorization.trimmingCharacters(in: .whitespaces)
        let scheme = trimmed.prefix { $0 != " " }.lowercased()
        let rest = trimmed.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)
        switch scheme {
        case "vapid":
            let parameters = Self.parameters(rest, separators: [","])
            guard let token = parameters["t"], let key = parameters["k"] else {
                throw refusal(.unauthorized, "expected Authorization: vapid t=JWT, k=KEY")
            }
            return (token, key)
        case "webpush":
            guard let key = cryptoKey.flatMap({ Self.parameters($0, separators: [",", ";"])["p256ecdsa"] }) else {
                throw refusal(.unauthorized, "Authorization: WebPush needs Crypto-Key: p256ecdsa=KEY")
            }
            return (rest, key)
        default:
            throw refusal(.unauthorized, "expected Authorization: vapid t=JWT, k=KEY (RFC 8292), not \"\(scheme)\"")
        }
    }

    /// `name=value` pairs split at `separators`; names lowercased, quotes removed.
    private static func parameters(_ text: String, separators: Set<Character>) -> [String: String] {
        var result: [String: String] = [:]
        for part in text.split(whereSeparator: { separators.contains($0) }) {
            guard let equals = part.firstIndex(of: "=") else { continue }
            let name = part[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            result[name] = value
        }
        return result
    }

    /// The claims of `token` once its ES256 signature verifies under `publicKey`.
    private static func verifiedClaims(_ token: String, publicKey: P256.Signing.PublicKey) throws(ServerError) -> [String: JSONValue] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = base64urlDecode(String(parts[0])), let claimBytes = base64urlDecode(String(parts[1])),
            let signatureBytes = base64urlDecode(String(parts[2]))
        else {
            throw refusal(.unauthorized, "t is not a JWT (three base64url parts separated by dots)")
        }
        guard case .object(let header)? = try? JSONParser.parse(headerBytes),
            case .object(let claims)? = try? JSONParser.parse(claimBytes)
        else {
            throw refusal(.unauthorized, "the JWT's header or claims are not JSON objects")
        }
        guard header["alg"] == .string("ES256") else { throw refusal(.unauthorized, "the JWT's alg must be ES256") }
        guard signatureBytes.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else {
            throw refusal(.unauthorized, "the JWT's signature does not verify under k (ES256, 64-byte r‖s)")
        }
        return claims
    }

    private static func refusal(_ status: HTTPResponse.Status, _ reason: String) -> ServerError {
        var error = ServerError(status, field: "Authorization", "VAPID: " + reason)
        if status == .unauthorized { error.headers[.wwwAuthenticate] = "vapid" }
        return error
    }

    /// Bytes of base64url (or base64) text, padded or not; `nil` if it is neither.
    static func base64urlDecode(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
