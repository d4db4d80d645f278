import ArgumentParser
import HeraldEvents
import HeraldServer

/// `herald serve subscriptions add|list|remove`: Web Push subscriptions (what
/// `POST /v1/admin/subscriptions` does), beside a running server or not.
struct ServeSubscriptionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Create, list and remove the Web Push subscriptions that /push/{token} receives for.",
        discussion: """
            add generates the subscription's receiver keys and prints what an application
            server needs: the endpoint (/push/TOKEN, under the server's public URL), p256dh and
            auth. list prints them again (never the private key). remove deletes one: pushes to
            its endpoint then get 404.

            Examples:
              herald serve subscriptions add --store ./herald.db --account tg:1 --inner-format telegram
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

    @Option(name: .long, help: "The subscription's token, the last part of its endpoint (remove).")
    var token: String?

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

    func run() throws {
        let registry = try SubscriptionRegistry(storePath: store.path)
        switch action {
        case "add":
            let created = try registry.create(account: account!, innerFormat: innerFormat)
            Terminal.line(json ? Self.json(created) : Self.line(created))
        case "remove":
            guard try registry.remove(token: token!) else {
                throw CLIFailure(exitCode: CLIFailure.usage, "no subscription has token \(token!)")
            }
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("removed"); writer.string(token!)
            writer.objectEnd()
            Terminal.line(json ? writer.string : "subscription removed")
        default:
            for subscription in try registry.all() where account.map({ subscription.account.isSameName(as: $0) }) ?? true {
                Terminal.line(json ? Self.json(subscription) : Self.line(subscription))
            }
        }
    }

    /// endpoint, account, inner format, p256dh, auth: tab-separated.
    static func line(_ subscription: SubscriptionRegistry.Subscription) -> String {
        [subscription.endpoint, subscription.account, subscription.innerFormat, subscription.p256dh, subscription.auth]
            .joined(separator: "\t")
    }

    static func json(_ subscription: SubscriptionRegistry.Subscription) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("token"); writer.string(subscription.token)
        writer.key("endpoint"); writer.string(subscription.endpoint)
        writer.key("account"); writer.string(subscription.account)
        writer.key("inner_format"); writer.string(subscription.innerFormat)
        writer.key("p256dh"); writer.string(subscription.p256dh)
        writer.key("auth"); writer.string(subscription.auth)
        writer.key("createdAt"); writer.int(subscription.createdAt)
        writer.objectEnd()
        return writer.string
    }
}
