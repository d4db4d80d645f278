// HeraldConsole: the web console, HTML pages over a store, served by `herald serve` at
// `/console/` (behind a `read:` token) and by `herald console` over a store on disk
// (read-only, loopback, no token). Map of the module:
// - `Console` (this file): the routes, and what a server gives the console (`ConsoleStore`);
// - `ConsoleAccess`: who may see what (tokens and the sign-in cookie) and the sign-in page;
// - `Console+Accounts`, `+Shade`, `+Audit`, `+Store`: the pages;
// - `ConsoleActivity`: ingest rate and request latency of the last hour, and their charts;
// - `LocalConsole`: `herald console`;
// - `HTML`: escaping and the page layout; `Resources/`: console.css and console.js.

import Foundation
import HeraldEvents
import HeraldStore
import HTTPTypes
import Hummingbird

/// What a server hands the console: the store, and what only a live server has.
public protocol ConsoleStore: Sendable {
    /// The store's directory.
    var path: String { get }
    /// Runs `body` with the store off the event loops.
    func run<Result: Sendable>(_ body: @escaping @Sendable (Store) throws -> Result) async throws -> Result
    /// The account's update stream as Server-Sent Events (`herald serve`), or `nil` when the
    /// store does not change (`herald console`).
    func updateStream(_ request: Request, account: String) async throws -> Response?
    /// Ingest rate and request latency of the last hour, by minute.
    func activity() async throws -> ConsoleActivity.Series
}

/// The console's routes over one store.
public struct Console: Sendable {
    let store: any ConsoleStore
    let access: ConsoleAccess
    let accountsCache = AccountsCache()

    /// - Parameters:
    ///   - store: The store and the server's live parts.
    ///   - access: `.local` (`herald console`: no token) or the check of tokens.
    public init(store: any ConsoleStore, access: ConsoleAccess) {
        self.store = store
        self.access = access
    }

    /// How many rows a page of a list shows (accounts, groups).
    static let pageSize = 100

    /// Adds every `/console` route to `router`.
    public func addRoutes(to router: Router<BasicRequestContext>) {
        let console = router.group("/console")
        console.get("assets/console.css") { _, _ in Self.asset(PackageResources.console_css, type: "text/css; charset=utf-8") }
        console.get("assets/console.js") { _, _ in Self.asset(PackageResources.console_js, type: "text/javascript; charset=utf-8") }
        console.get("sign-in") { request, _ in access.signInPage(request, failed: false) }
        console.post("sign-in") { request, _ in try await access.signIn(request) }
        console.get("sign-out") { request, _ in access.signOut(request) }
        console.get("/") { request, _ in try await page(request, account: nil) { try await accountsPage(request) } }
        console.get("store") { request, _ in try await page(request, account: nil) { try await storePage() } }
        console.get("accounts/:account") { request, context in
            let account = try Self.pathAccount(context)
            return try await page(request, account: account) { try await shadePage(request, account: account) }
        }
        console.get("accounts/:account/audit") { request, context in
            let account = try Self.pathAccount(context)
            return try await page(request, account: account) { try await auditPage(request, account: account) }
        }
        console.get("accounts/:account/updates") { request, context in
            let account = try Self.pathAccount(context)
            guard access.grant(request).allows(account) else { return Self.unauthorized() }
            return try await store.updateStream(request, account: account)
                ?? Response(status: .notFound, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: .init(string: "no update stream: the store is a copy on disk\n")))
        }
        console.get("records/:seq") { request, context in
            let text = try context.parameters.require("seq")
            return try await recordPage(request, seq: text)
        }
    }

    /// Renders a page for whoever may read `account` (`nil`: every account): a request
    /// without a usable token is sent to the sign-in page; a token for other accounts gets a
    /// page saying so. A store that cannot be read gets the damage page.
    func page(_ request: Request, account: String?, _ render: () async throws -> Page) async throws -> Response {
        let grant = access.grant(request)
        guard grant.signedIn else { return access.redirectToSignIn(request) }
        guard account.map(grant.allows) ?? grant.everything else {
            var page = Page(title: "Not allowed")
            page.status = .forbidden
            page.body.raw("<section class=\"notice\"><h1>Not allowed</h1><p>This token reads ")
            page.body.text(grant.accounts.sorted().joined(separator: ", "))
            page.body.raw(" only.</p>")
            for name in grant.accounts.sorted().prefix(20) {
                page.body.raw("<p><a href=\"\(HTML.accountURL(name))\">")
                page.body.text(name)
                page.body.raw("</a></p>")
            }
            page.body.raw("</section>")
            return page.response(signedIn: true, local: access.isLocal)
        }
        do {
            return try await render().response(signedIn: true, local: access.isLocal)
        } catch {
            return try failurePage(error)
        }
    }

    /// The page for a store that failed to answer (damage, a closed store); cancellation and
    /// HTTP errors go on.
    func failurePage(_ error: any Error) throws -> Response {
        if error is CancellationError || error is any HTTPResponseError && !(error is StoreError) { throw error }
        let message = (error as? ConsoleUnavailable)?.message ?? "\(error)"
        return Page.damaged(message, path: store.path).response(signedIn: true, local: access.isLocal)
    }

    /// 401 for the routes that are not pages (the update stream, raw records).
    static func unauthorized() -> Response {
        Response(
            status: .unauthorized, headers: [.contentType: "text/plain; charset=utf-8", .wwwAuthenticate: "Bearer"],
            body: ResponseBody(byteBuffer: .init(string: "a token with read: scope is required (sign in at /console/sign-in)\n")))
    }

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache", HTTPField.Name("X-Content-Type-Options")!: "nosniff"],
            body: ResponseBody(byteBuffer: .init(bytes: bytes)))
    }

    /// The `account` path parameter, percent-decoded.
    static func pathAccount(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("account")
        return raw.removingPercentEncoding ?? raw
    }

    /// `GET /console/records/{seq}`: one log record in the form `herald export` prints, as a
    /// page (or as the JSON line itself with `?raw=1`).
    func recordPage(_ request: Request, seq text: String) async throws -> Response {
        let grant = access.grant(request)
        guard grant.signedIn else { return Self.unauthorized() }
        let local = access.isLocal
        guard let seq = UInt64(text) else {
            return Page.notFound("\"\(text)\" is not a seq (a non-negative integer).", back: ("/console/", "Accounts"))
                .response(signedIn: true, local: local)
        }
        let found: (account: String, line: String)?
        do {
            found = try await store.run { store in
                guard let record = try store.history.records(from: seq, through: seq, limit: 1).first else { return nil }
                var writer = JSONWriter()
                record.writeExportLine(to: &writer)
                return (record.event.account, String(decoding: writer.bytes, as: UTF8.self))
            }
        } catch {
            return try failurePage(error)
        }
        guard let found, grant.allows(found.account) else {
            return Page.notFound("No record with seq \(seq) is in the readable history.", back: ("/console/store", "Store"))
                .response(signedIn: true, local: local)
        }
        if request.uri.queryParameters.get("raw") == "1" {
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: .init(string: found.line + "\n")))
        }
        var page = Page(title: "Record \(seq)")
        page.body.raw("<h1>Record <span class=\"seq\">\(seq)</span></h1><p>Account <a href=\"\(HTML.accountURL(found.account))\">")
        page.body.text(found.account)
        page.body.raw("</a> · <a href=\"?raw=1\">JSON line</a> · the form of <code>herald export</code></p><pre class=\"record\">")
        page.body.text(found.line)
        page.body.raw("</pre>")
        return page.response(signedIn: true, local: local)
    }
}

/// The store could not be opened (`herald console` on a damaged copy): every page says so.
public struct ConsoleUnavailable: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
