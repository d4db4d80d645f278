import Foundation
import HTTPTypes
import Hummingbird

/// Who may see which pages.
///
/// Under `herald serve` a request carries a token, as an `Authorization: Bearer` header or as
/// the `herald_console` cookie the sign-in page sets: a session cookie (no expiry, `HttpOnly`,
/// `SameSite=Strict`, path `/console`), which the console's script also drops when a tab
/// opens a page without having signed in itself, so the token stays with the tab it was
/// given in. `herald console` serves a copy on loopback, without tokens.
public struct ConsoleAccess: Sendable {
    /// What a token may read: every account, or these.
    public struct Grant: Sendable {
        public var everything: Bool
        public var accounts: Set<String>

        public init(everything: Bool, accounts: Set<String>) {
            self.everything = everything
            self.accounts = accounts
        }

        static let none = Grant(everything: false, accounts: [])
        var signedIn: Bool { everything || !accounts.isEmpty }
        func allows(_ account: String) -> Bool { everything || accounts.contains(account) }
    }

    /// The token's grant, `nil` for an unknown token.
    let check: (@Sendable (String) -> Grant?)?

    /// `herald console`: everything, no token.
    public static let local = ConsoleAccess(check: nil)

    /// `herald serve`: `check` maps a token to what it may read (`nil`: unknown, or no `read:`
    /// scope).
    public static func tokens(_ check: @escaping @Sendable (String) -> Grant?) -> ConsoleAccess {
        ConsoleAccess(check: check)
    }

    var isLocal: Bool { check == nil }

    static let cookieName = "herald_console"

    /// The request's token (bearer header first, then the cookie).
    static func token(_ request: Request) -> String? {
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
            if !token.isEmpty { return token }
        }
        for field in request.headers[values: .cookie] {
            for part in field.split(separator: ";") {
                let pair = part.trimmingCharacters(in: .whitespaces)
                guard pair.hasPrefix(cookieName + "=") else { continue }
                let value = String(pair.dropFirst(cookieName.count + 1))
                return value.removingPercentEncoding ?? value
            }
        }
        return nil
    }

    /// What the request may read.
    func grant(_ request: Request) -> Grant {
        guard let check else { return Grant(everything: true, accounts: []) }
        guard let token = Self.token(request), let grant = check(token) else { return .none }
        return grant
    }

    /// 303 to the sign-in page, which comes back to this page.
    func redirectToSignIn(_ request: Request) -> Response {
        let next = HTML.component(request.uri.description)
        return Response(status: .seeOther, headers: [.location: "/console/sign-in?next=\(next)", .cacheControl: "no-store"])
    }

    /// Where to go after signing in: a console path, never another site.
    static func safeNext(_ text: String?) -> String {
        guard let text, text.hasPrefix("/console"), !text.hasPrefix("//"), !text.contains("\\") else { return "/console/" }
        return text
    }

    /// `GET /console/sign-in`: the form (under `herald console`, straight to the accounts).
    func signInPage(_ request: Request, failed: Bool, next: String? = nil) -> Response {
        let next = Self.safeNext(next ?? request.uri.queryParameters.get("next"))
        if isLocal { return Response(status: .seeOther, headers: [.location: next]) }
        var page = Page(title: "Sign in")
        if failed { page.status = .unauthorized }
        page.body.raw("<section class=\"signin\"><h1>Sign in</h1>")
        page.body.raw("<p>A token of this server with <code>read:*</code> (every account) or <code>read:ACCOUNT</code>. It stays with this tab.</p>")
        if failed { page.body.raw("<p class=\"error\" role=\"alert\">That token is unknown or reads no account.</p>") }
        page.body.raw("<form method=\"post\" action=\"/console/sign-in\" id=\"signin\"><input type=\"hidden\" name=\"next\" value=\"")
        page.body.text(next)
        page.body.raw("\"><label for=\"token\">Token</label><input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" autofocus required>")
        page.body.raw("<button type=\"submit\">Sign in</button></form></section>")
        var response = page.response(signedIn: false, local: false)
        response.headers[.wwwAuthenticate] = failed ? "Bearer error=\"invalid_token\"" : nil
        return response
    }

    /// `POST /console/sign-in` (form `token`, `next`): sets the session cookie and goes on.
    func signIn(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 * 1024)
        var fields: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let name = parts.first?.removingPercentEncoding else { continue }
            fields[name] = parts.count > 1 ? (parts[1].removingPercentEncoding ?? "") : ""
        }
        let next = Self.safeNext(fields["next"])
        let token = (fields["token"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let check, !token.isEmpty, check(token)?.signedIn == true else {
            return signInPage(request, failed: true, next: next)
        }
        let cookie = "\(Self.cookieName)=\(HTML.component(token)); Path=/console; HttpOnly; SameSite=Strict"
        return Response(status: .seeOther, headers: [.location: next, .setCookie: cookie, .cacheControl: "no-store"])
    }

    /// `GET /console/sign-out[?next=PATH]`: drops the cookie, then the sign-in page.
    func signOut(_ request: Request) -> Response {
        let cookie = "\(Self.cookieName)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0"
        let next = HTML.component(Self.safeNext(request.uri.queryParameters.get("next")))
        return Response(
            status: .seeOther, headers: [.location: "/console/sign-in?next=\(next)", .setCookie: cookie, .cacheControl: "no-store"])
    }
}
