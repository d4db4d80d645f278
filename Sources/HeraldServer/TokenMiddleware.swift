import Hummingbird

/// The bearer-token check of a route group: a request reaches the group's handlers only with
/// a known token that grants the scope the route needs and is under its rate limit; otherwise
/// it is refused by ``TokenAuthority/authorize(_:_:)`` (401 without a known token, 403 when
/// the token's scopes do not grant it, 429 over the token's rate).
///
/// The scope may depend on the request: `read:ACCOUNT` for the account a path or query names.
///
/// ```swift
/// let admin = router.group("/v1/admin").add(middleware: TokenMiddleware(tokens, scope: .admin))
/// admin.post("snapshot") { request, context in … }  // only with an admin token
/// ```
struct TokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    let tokens: TokenAuthority
    /// The scope `request` needs; throws to refuse a request that names no account.
    let scope: @Sendable (Request, Context) throws -> Scope

    /// Asks every request for `scope`.
    init(_ tokens: TokenAuthority, scope: Scope) {
        self.init(tokens) { _, _ in scope }
    }

    /// Asks each request for the scope `scope` derives from it.
    init(_ tokens: TokenAuthority, scope: @escaping @Sendable (Request, Context) throws -> Scope) {
        self.tokens = tokens
        self.scope = scope
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try tokens.authorize(request, scope(request, context))
        return try await next(request, context)
    }
}

extension HeraldServer {
    /// The `account` path parameter, percent-decoded.
    static func pathAccount(_ context: BasicRequestContext) throws -> String {
        let raw = try context.parameters.require("account")
        return raw.removingPercentEncoding ?? raw
    }
}
