/// What an adapter needs besides the payload: the account, the receive time and keys.
public struct IngestContext: Sendable {
    /// The account of the payloads (what `herald ingest --account` sets). Payloads that name
    /// no account use it; a payload naming a different account (or decrypted with another
    /// account's key) is rejected.
    public var account: String?
    /// When the payload was received, in Unix seconds: the `date` of events whose payload
    /// carries none. The log records it, so replay stays deterministic.
    public var receivedAt: Int64
    /// Telegram auth keys that may decrypt `{"p": …}` pushes (matched by key id). A push
    /// opened with a key that names its account belongs to that account.
    public var telegramKeys: [TelegramKey]
    /// The receiver's Web Push keys, needed to decrypt a Web Push body.
    public var webPush: WebPushKeys?
    /// Zulip E2EE push keys that may decrypt `encrypted_data` (matched by `push_key_id`).
    public var zulipPushKeys: [ZulipPushKey]
    /// The format of what a decrypted Web Push body contains.
    public var innerFormat: PayloadFormat?
    /// The app's strings table, for localized alerts (`loc-key`); empty: arguments joined.
    public var strings: LocalizedStrings

    /// Creates a context.
    public init(
        account: String? = nil,
        receivedAt: Int64,
        telegramKeys: [TelegramKey] = [],
        webPush: WebPushKeys? = nil,
        innerFormat: PayloadFormat? = nil,
        zulipPushKeys: [ZulipPushKey] = [],
        strings: LocalizedStrings = LocalizedStrings()
    ) {
        self.account = account
        self.receivedAt = receivedAt
        self.telegramKeys = telegramKeys
        self.webPush = webPush
        self.zulipPushKeys = zulipPushKeys
        self.innerFormat = innerFormat
        self.strings = strings
    }

    /// The account for a payload that names `named` (or none), checked against ``account``.
    ///
    /// - Parameters:
    ///   - named: the account the payload names, already in Herald's form (`tg:14124122`).
    ///   - field: the payload field it came from, for errors.
    ///   - format: the format being decoded, for errors.
    ///   - key: the id and account of the key that decrypted the payload, when that key
    ///     belongs to an account: the payload is that account's, and `named` or ``account``
    ///     naming another is a clash.
    func resolveAccount(
        named: String?, field: String, format: PayloadFormat, key: (id: Int64, account: String)? = nil
    ) throws(IngestError) -> String {
        if let key {
            if let named, named != key.account {
                throw IngestError(
                    format: format, field: field,
                    reason: "payload is for account \"\(named)\", but it was decrypted with key \(key.id) of account \"\(key.account)\"")
            }
            if let account, account != key.account {
                throw IngestError(
                    format: format, field: "account",
                    reason: "decrypted with key \(key.id) of account \"\(key.account)\", not \"\(account)\", the context's account (IngestContext.account)")
            }
            return key.account
        }
        if let named {
            if let account, account != named {
                throw IngestError(
                    format: format, field: field,
                    reason: "payload is for account \"\(named)\", not \"\(account)\"")
            }
            return named
        }
        guard let account, !account.isEmpty else {
            throw IngestError(
                format: format, field: field,
                reason: "the payload names no account and the context gives none (IngestContext.account)")
        }
        return account
    }
}
