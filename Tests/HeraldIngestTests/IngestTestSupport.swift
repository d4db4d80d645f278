import Foundation
import HeraldEvents
import Testing
import HeraldTestSupport

@testable import HeraldIngest

/// Reads the sample payloads (`Tests/Fixtures/payloads`) and builds contexts.
enum Samples {
    /// `Tests/Fixtures/payloads`.
    static let directory = URL(fileURLWithPath: Fixtures.path("payloads"))

    /// The bytes of a sample, e.g. `bytes("telegram/doc-sample.json")`.
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// A sample parsed as a JSON object (for the vector files).
    static func json(_ name: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(try bytes(name)))
        return try #require(object as? [String: Any])
    }

    /// Every sample file of the ingest formats, with its format.
    static let all: [(name: String, format: PayloadFormat)] = [
        ("telegram/doc-sample.json", .telegram),
        ("zulip/e2ee-channel-message.json", .zulip),
        ("zulip/e2ee-direct-message.json", .zulip),
        ("zulip/e2ee-remove.json", .zulip),
        ("zulip/e2ee-test.json", .zulip),
        ("zulip/legacy-fcm-remove.json", .zulip),
        ("zulip/legacy-fcm-stream-message.json", .zulip),
        ("apns/thread-message.json", .apns),
        ("apns/unthreaded-reminder.json", .apns),
        ("fcm/data-message.json", .fcm),
        ("matrix/sygnal-notification.json", .matrix),
        ("matrix/sygnal-event-id-only.json", .matrix),
        ("matrix/sygnal-badge-only.json", .matrix),
    ]

    /// The Telegram vector's key.
    static func telegramKey() throws -> TelegramKey {
        try TelegramKey(base64url: try #require(try json("telegram/encrypted-push-vector.json")["key_base64url"] as? String))
    }

    /// The Telegram vector's pushes: the `p` payload line and the expected plaintext.
    static func telegramPushes() throws -> [(payload: String, plaintext: String)] {
        let vector = try json("telegram/encrypted-push-vector.json")
        let pushes = try #require(vector["pushes"] as? [[String: Any]])
        return try pushes.map { push in
            let payload = try #require(push["payload"] as? [String: Any])
            let line = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
            return (line, try #require(push["plaintext"] as? String))
        }
    }

    /// A base64url field of the Web Push vector, decoded.
    static func webPush(_ key: String) throws -> [UInt8] {
        let text = try #require(try json("webpush/rfc8291-vector.json")[key] as? String)
        return try #require(Base64URL.decode(text))
    }

    /// The receiver's keys of the Web Push vector.
    static func webPushKeys() throws -> WebPushKeys {
        try WebPushKeys(privateKey: try webPush("ua_private"), authSecret: try webPush("auth_secret"))
    }
}

/// A context for tests: a fixed receive time, optionally an account and keys.
func context(
    account: String? = nil, telegramKeys: [TelegramKey] = [], webPush: WebPushKeys? = nil,
    innerFormat: PayloadFormat? = nil
) -> IngestContext {
    IngestContext(
        account: account, receivedAt: 1_754_390_000, telegramKeys: telegramKeys, webPush: webPush,
        innerFormat: innerFormat)
}

/// The receive time used by ``context(account:telegramKeys:webPush:innerFormat:)``.
let receivedAt: Int64 = 1_754_390_000

/// Decodes `text` and returns its events, failing the test on an error.
func events(_ text: String, _ format: PayloadFormat?, _ context: IngestContext) throws -> [Event] {
    try Ingest.decode(text, format: format, context: context).events
}

/// The error `text` decodes to, or `nil` when it decoded.
func ingestError(_ text: String, _ format: PayloadFormat?, _ context: IngestContext) -> IngestError? {
    do {
        _ = try Ingest.decode(text, format: format, context: context)
        return nil
    } catch {
        return error
    }
}

/// An object identity as SEMANTICS §2 defines it, plus the account.
struct Identity: Hashable {
    var account: String
    var chat: String
    var objectClass: ObjectClass
    var id: Int64

    /// The identity a `notify` or `edit` names; `nil` for other events.
    init?(_ event: Event) {
        switch event.payload {
        case .notify(let n): self.init(account: event.account, chat: n.chat, objectClass: n.kind.objectClass, id: n.id)
        case .edit(let e): self.init(account: event.account, chat: e.chat, objectClass: e.kind.objectClass, id: e.id)
        default: return nil
        }
    }

    init(account: String, chat: String, objectClass: ObjectClass, id: Int64) {
        self.account = account
        self.chat = chat
        self.objectClass = objectClass
        self.id = id
    }
}
