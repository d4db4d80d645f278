import ArgumentParser
import Configuration
import HeraldEvents
import HeraldServer

/// `herald serve subscriptions add|list|remove`: Web Push subscriptions (what
/// `POST /v1/admin/subscriptions` does), beside a running server or not.
struct ServeSubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Create, list and remove the Web Push subscriptions that /push/{token} receives for.",
        discussion: """
            add generates the subscription's receiver keys and prints what an
            application server needs: the endpoint, p256dh and auth. list prints
            them again (never the private key). remove deletes one: pushes to its
            endpoint then get 404. The endpoint is absolute under the public URL
            (--public-url, $HERALD_PUBLIC_URL or the --config file's
            herald.public.url, as for herald serve); without one it is the path,
            /push/TOKEN, for the application server to prefix. With --vapid-key,
            pushes must carry a VAPID token (RFC 8292) of that application server
            key.

            Examples:
              herald serve subscriptions add --store ./herald.db --account tg:1 \\
                --inner-format telegram --public-url https://push.example.com \\
                --vapid-key BASE64URL_P256_PUBLIC_KEY
              herald serve subscriptions list --store ./herald.db --json
              herald serve subscriptions remove --store ./herald.db --token TOKEN
            """
    )

    @OptionGroup var store: StoreOptions

    @Argument(help: "add, list or remove.")
    var action: String

    @Option(name: .long, help: "The account its pushes are stored for (add; list: only this account's).")
    var account: String?

    @Option(name: .long, help: "The format inside decrypted bodies (add): \(SubscriptionRegistry.innerFormats.joined(separator: ", ")).")
    var innerFormat = "herald"

    @Option(name: .long, help: "The subscription's token, the last part of its endpoint (remove; one made before 0.5 that starts with '-' as --token=-…).")
    var token: String?

    @Option(name: .long, help: ArgumentHelp("Bind the subscription to this VAPID application server public key (add): an uncompressed P-256 point in base64url, as a browser's applicationServerKey.", valueName: "KEY"))
    var vapidKey: String?

    @Option(name: .long, help: ArgumentHelp("The server's public base URL, for absolute endpoints (herald.public.url, $HERALD_PUBLIC_URL; default none: endpoints are paths).", valueName: "URL"))
    var publicURL: String?

    @Option(name: .long, help: ArgumentHelp("herald serve's JSON configuration file, for its herald.public.url.", valueName: "FILE"))
    var config: String?

    @Flag(name: .long, help: "Print JSON: an object for add and remove, one object per line for list.")
    var json = false

    func validate() throws {
        switch action {
        case "add":
            guard account?.isEmpty == false else { throw ValidationError("add needs --account") }
            guard SubscriptionRegistry.innerFormats.contains(innerFormat) else {
                throw ValidationError("unknown --inner-format '\(innerFormat)'; expected \(SubscriptionRegistry.innerFormats.joined(separator: ", "))")
            }
        case "remove":
            guard token?.isEmpty == false else { throw ValidationError("remove needs --token") }
        case "list": break
        default: throw ValidationError("unknown action '\(action)'; expected add, list or remove")
        }
    }

    func run() async throws {
        let registry = try SubscriptionRegistry(storePath: store.path)
        var flags: [AbsoluteConfigKey: ConfigValue] = [:]
        if let publicURL { flags["herald.public.url"] = .init(.string(publicURL), isSecret: false) }
        let reader = try await ServeRunCommand.configReader(flags: flags, file: config)
        let base = try ServeRunCommand.usageFailure { try ServerConfiguration.publicURL(reading: reader) }
        switch action {
        case "add":
            let created = try ServeRunCommand.usageFailure {
                try registry.create(account: account!, innerFormat: innerFormat, vapidKey: vapidKey)
            }
            Terminal.line(json ? Self.json(created, base) : Self.line(created, base))
        case "remove":
            guard try registry.remove(token: token!) else {
                throw CLIFailure(exitCode: CLIFailure.usage, "no subscription has token \(token!)")
            }
            Terminal.line(json ? Self.removed(token!) : "subscription removed")
        default:
            for subscription in try registry.all() where account.map({ subscription.account.isSameName(as: $0) }) ?? true {
                Terminal.line(json ? Self.json(subscription, base) : Self.line(subscription, base))
            }
        }
    }

    /// `{"removed": KEY}`, as the admin API's `DELETE` answers.
    static func removed(_ key: String) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("removed"); writer.string(key)
        writer.objectEnd()
        return writer.string
    }

    /// endpoint, account, inner format, p256dh, auth and, when bound, the VAPID key: tab-separated.
    static func line(_ subscription: SubscriptionRegistry.Subscription, _ base: PublicURL?) -> String {
        ([subscription.endpoint(under: base), subscription.account, subscription.innerFormat, subscription.p256dh, subscription.auth]
            + (subscription.vapidKey.map { [$0] } ?? []))
            .joined(separator: "\t")
    }

    /// One subscription (schema/subscription-line.schema.json).
    static func json(_ subscription: SubscriptionRegistry.Subscription, _ base: PublicURL?) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("token"); writer.string(subscription.token)
        writer.key("endpoint"); writer.string(subscription.endpoint(under: base))
        writer.key("account"); writer.string(subscription.account)
        writer.key("inner_format"); writer.string(subscription.innerFormat)
        writer.key("p256dh"); writer.string(subscription.p256dh)
        writer.key("auth"); writer.string(subscription.auth)
        if let key = subscription.vapidKey { writer.key("vapid_key"); writer.string(key) }
        writer.key("createdAt"); writer.int(subscription.createdAt)
        writer.objectEnd()
        return writer.string
    }
}
