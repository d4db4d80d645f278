import ArgumentParser
import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore

/// The ingest options shared by `ingest` and `quarantine retry`, and the decoder they describe.
struct PayloadOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "The payload format: \(PayloadDecoder.formatNames.joined(separator: "|")) (default: herald; for a retry, the format the payload was ingested as).",
        completion: .list(PayloadDecoder.formatNames))
    var format: String?

    /// The format to read with: `--format`, else `herald`.
    var formatName: String { format ?? "herald" }

    @Option(name: .long, help: "The account, for payloads that do not name one (a herald line must name its own); a payload naming another account is rejected.")
    var account: String?

    @Option(name: .long, help: ArgumentHelp("A Telegram auth key (256 bytes, base64url), for encrypted pushes; repeatable. Keys added with `herald keys add` are used too.", valueName: "BASE64URL"))
    var telegramKey: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A file of Telegram auth keys (base64url, one per line), or - for standard input (the payloads must then come from a file), so that a key, an account credential, never appears on a command line; repeatable.",
            valueName: "FILE"))
    var telegramKeyFile: [String] = []

    /// The keys of `--telegram-key` and `--telegram-key-file`, as given.
    func telegramKeyTexts() throws -> [String] {
        var keys = telegramKey
        for file in telegramKeyFile { keys += try KeyFile.keys(from: file, option: "--telegram-key-file") }
        return keys
    }

    @Option(name: .long, help: ArgumentHelp("The Web Push receiver's P-256 private key (base64url).", valueName: "BASE64URL"))
    var webpushPrivateKey: String?

    @Option(name: .long, help: ArgumentHelp("The Web Push auth secret (base64url).", valueName: "BASE64URL"))
    var webpushAuth: String?

    @Option(name: .long, help: "The format inside decrypted Web Push bodies.")
    var innerFormat: String?

    @Option(name: .long, help: ArgumentHelp("A Zulip E2EE push key as registered (push_key_id, then base64 of 0x31 and 32 key bytes), for encrypted Zulip pushes; repeatable.", valueName: "ID:BASE64"))
    var zulipPushKey: [String] = []

    @Option(name: .long, help: ArgumentHelp("The app's strings table (Apple .strings or a JSON object), to render localized alerts (loc-key); without it their arguments are joined.", valueName: "FILE"))
    var strings: String?

    /// The strings table named by `--strings`, parsed; empty without one.
    func stringsTable() throws -> LocalizedStrings {
        guard let strings else { return LocalizedStrings() }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: strings)) } catch {
            throw ValidationError("--strings: cannot read \(strings): \(error.localizedDescription)")
        }
        do { return try LocalizedStrings(parsing: Array(data)) } catch {
            throw ValidationError("--strings: \(strings): \(error.reason)")
        }
    }

    mutating func validate() throws {
        _ = try stringsTable()
        if let format, !PayloadDecoder.formatNames.contains(format) {
            throw ValidationError("unknown format '\(format)'; expected one of: \(PayloadDecoder.formatNames.joined(separator: ", "))")
        }
        if format == PayloadFormat.rongcloud.rawValue, let problem = RongCloudAccount.problem(account) {
            throw ValidationError("--format rongcloud --account: \(problem)")
        }
        if let innerFormat, PayloadFormat(rawValue: innerFormat) == nil {
            throw ValidationError("unknown --inner-format '\(innerFormat)'")
        }
        if (webpushPrivateKey == nil) != (webpushAuth == nil) {
            throw ValidationError("--webpush-private-key and --webpush-auth go together")
        }
        for key in telegramKey {
            do { _ = try TelegramKey(base64url: key) } catch { throw ValidationError("--telegram-key: \(error)") }
        }
        for key in zulipPushKey {
            do { _ = try ZulipPushKey(argument: key) } catch { throw ValidationError("--zulip-push-key: \(error)") }
        }
        if let webpushPrivateKey, let webpushAuth {
            do { _ = try WebPushKeys(privateKeyBase64url: webpushPrivateKey, authSecretBase64url: webpushAuth) } catch {
                throw ValidationError("--webpush-private-key/--webpush-auth: \(error)")
            }
        }
    }
}

extension PayloadOptions {
    /// The decoder these options describe, with the Telegram keys stored in `store` added.
    func decoder(store: Store) throws -> PayloadDecoder {
        var telegramKeys = try telegramKeyTexts().map { text in
            do { return try TelegramKey(base64url: text) } catch { throw ValidationError("--telegram-key-file: \(error)") }
        }
        // A stored key keeps the account it was added with (`""`: any account).
        telegramKeys += try store.keyring.all().compactMap { try? TelegramKey(bytes: $0.bytes, account: $0.account) }
        let context = IngestContext(
            account: account,
            receivedAt: Int64(Date().timeIntervalSince1970),
            telegramKeys: telegramKeys,
            webPush: try webpushPrivateKey.map { try WebPushKeys(privateKeyBase64url: $0, authSecretBase64url: webpushAuth ?? "") },
            innerFormat: innerFormat.flatMap(PayloadFormat.init(rawValue:)),
            zulipPushKeys: try zulipPushKey.map { try ZulipPushKey(argument: $0) },
            strings: try stringsTable())
        return PayloadDecoder(format: PayloadFormat(rawValue: formatName), context: context)
    }
}
