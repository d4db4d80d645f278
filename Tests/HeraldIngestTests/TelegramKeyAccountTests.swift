import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// An encrypted push belongs to the account of the key that opened it.
@Suite("Telegram key accounts")
struct TelegramKeyAccountTests {
    /// The vector's key, stored for `tg:1`.
    static func accountKey() throws -> TelegramKey {
        try TelegramKey(bytes: try Samples.telegramKey().bytes, account: "tg:1")
    }

    /// An encrypted push of `json` under the vector's key.
    static func encrypted(_ json: String) throws -> String {
        #"{"p":"\#(TelegramCipherTests.encrypt(Array(json.utf8), key: try Samples.telegramKey(), padding: 20))"}"#
    }

    @Test func anEmptyAccountMeansAnyAccount() throws {
        #expect(try TelegramKey(bytes: try Samples.telegramKey().bytes, account: "").account == nil)
        #expect(try Self.accountKey().account == "tg:1")
        #expect(try Self.accountKey().description == "TelegramKey(id: 2886285856283441188, account: tg:1)")
    }

    @Test func theVectorPushesTakeTheKeysAccountWhenNoneIsGiven() throws {
        let key = try Self.accountKey()
        let pushes = try Samples.telegramPushes()
        #expect(try events(pushes[0].payload, nil, context(telegramKeys: [key])).map(\.account) == ["tg:1"])
        #expect(try events(pushes[1].payload, .telegram, context(telegramKeys: [key]))
            == [Event(account: "tg:1", .read(chat: "channel:1176895497", maxId: 1359))])
        // The same account given explicitly agrees with the key.
        #expect(try events(pushes[0].payload, nil, context(account: "tg:1", telegramKeys: [key])).map(\.account) == ["tg:1"])
    }

    @Test func aRevokeUnderOneAccountsKeyCannotWipeAnother() throws {
        let line = try Self.encrypted(#"{"loc_key":"SESSION_REVOKE","loc_args":[],"custom":{}}"#)
        let key = try Self.accountKey()
        #expect(ingestError(line, nil, context(account: "tg:2", telegramKeys: [key])) == IngestError(
            format: .telegram, field: "account",
            reason: #"decrypted with key 2886285856283441188 of account "tg:1", not "tg:2", the context's account (IngestContext.account)"#))
        #expect(try events(line, nil, context(telegramKeys: [key])) == [Event(account: "tg:1", .revoke)])
    }

    @Test func aUserIdNamingAnotherAccountThanTheKeyIsRejected() throws {
        let line = try Self.encrypted(#"{"loc_key":"SESSION_REVOKE","loc_args":[],"custom":{},"user_id":2}"#)
        let key = try Self.accountKey()
        #expect(ingestError(line, nil, context(telegramKeys: [key])) == IngestError(
            format: .telegram, field: "user_id",
            reason: #"payload is for account "tg:2", but it was decrypted with key 2886285856283441188 of account "tg:1""#))
        let agreeing = try Self.encrypted(#"{"loc_key":"SESSION_REVOKE","loc_args":[],"custom":{},"user_id":1}"#)
        #expect(try events(agreeing, nil, context(telegramKeys: [key])) == [Event(account: "tg:1", .revoke)])
    }

    @Test func aKeyWithoutAccountKeepsThePayloadOrContextAccount() throws {
        let key = try Samples.telegramKey()
        let line = try Self.encrypted(#"{"loc_key":"SESSION_REVOKE","loc_args":[],"custom":{},"user_id":2}"#)
        #expect(try events(line, nil, context(telegramKeys: [key])) == [Event(account: "tg:2", .revoke)])
        #expect(ingestError(try Samples.telegramPushes()[0].payload, nil, context(telegramKeys: [key]))?.field == "user_id")
    }
}
