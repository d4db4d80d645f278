import Foundation

/// The base URL application servers reach `herald serve` at (`herald.public.url`), such as
/// `https://push.example.com` or `https://example.com/herald/`: Web Push endpoints are
/// handed out under it (`https://push.example.com/push/TOKEN`), and VAPID tokens must name
/// its origin as their audience.
public struct PublicURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL without trailing slashes: `https://example.com/herald`.
    public let base: String
    /// Its origin (RFC 6454): lowercase scheme and host, the port only when not the
    /// scheme's default: `https://example.com`.
    public let origin: String

    /// Parses `text`: an `http` or `https` URL with a host, no user, query or fragment.
    /// Throws ``ServerError`` (400, naming `key`) otherwise.
    public init(_ text: String, key: String = "herald.public.url") throws {
        func refuse(_ why: String) -> ServerError {
            ServerError.badRequest(field: key, "expected an http or https URL such as https://push.example.com, got \"\(text)\": \(why)")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw refuse("not a URL")
        }
        guard scheme == "http" || scheme == "https" else { throw refuse("the scheme must be http or https") }
        guard let origin = Self.origin(text) else { throw refuse("it has no host") }
        guard components.user == nil && components.password == nil else { throw refuse("it must not hold a user or password") }
        guard components.query == nil else { throw refuse("it must not have a query") }
        guard components.fragment == nil else { throw refuse("it must not have a fragment") }
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        self.origin = origin
        base = origin + path
    }

    /// The endpoint of the Web Push subscription with `token`.
    public func endpoint(token: String) -> String { base + "/push/" + token }

    public var description: String { base }

    /// The origin of an absolute `http`/`https` URL with nothing after its authority but a
    /// path, or `nil`: `HTTPS://Example.com:443/x` → `https://example.com`.
    static func origin(_ url: String) -> String? {
        guard let separator = url.range(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return origin(scheme: scheme, authority: String(authority))
    }

    /// `scheme://authority` serialized as an origin (lowercase, default port dropped), or
    /// `nil` when the authority has no host or holds a user.
    static func origin(scheme: String, authority: String) -> String? {
        guard !authority.contains("@") else { return nil }
        var host = authority.lowercased()
        var port: Substring?
        if let colon = host.lastIndex(of: ":"), !host[colon...].contains("]") {
            port = host[host.index(after: colon)...]
            host = String(host[..<colon])
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "\\" }) else { return nil }
        if let port {
            guard let number = Int(port), (0...65535).contains(number) else { return nil }
            if !(scheme == "https" && number == 443) && !(scheme == "http" && number == 80) { host += ":\(number)" }
        }
        return scheme + "://" + host
    }
}
