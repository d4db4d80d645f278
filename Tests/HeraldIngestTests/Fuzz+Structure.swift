import HeraldEvents
import Testing
import HeraldTestSupport

@testable import HeraldIngest

/// Structure-aware mutations: the seed is parsed, one node of the tree is replaced, removed
/// or added, and the tree is written back as JSON, so the case reaches the adapters' field
/// handling instead of stopping in the parser. For encrypted formats, a mutated inner
/// payload is encrypted again so the decrypted path is fuzzed too.
extension Fixture {
    /// Values that land on the adapters' edge cases.
    static let edgeValues: [JSONValue] = [
        .null, .bool(true), .bool(false), .number("0"), .number("-1"), .number("1"), .number("1.5"),
        .number("9223372036854775807"), .number("9223372036854775808"), .number("1e3"),
        .string(""), .string("1"), .string("0"), .string("-5"), .string("abc"), .string("1,2,3"), .string("1,,2"),
        .string("MESSAGE_DELETED"), .string("READ_HISTORY"), .string("READ_REACTION"), .string("SESSION_REVOKE"),
        .string("PINNED_TEXT"), .string("REACT_TEXT"), .string("PHONE_CALL_REQUEST"), .string("ENCRYPTION_REQUEST"),
        .string("remove"), .string("test"), .string("message"), .string("channel"), .string("direct"), .string("private"),
        .string("m.call.invite"), .string("low"), .string("passive"), .string("mention"), .string("\u{0}\u{FFFF}\"\\"),
        .string("VIDEO_CALL_MISSED"), .string("ENCRYPTED_MESSAGE"), .string("MESSAGE_ANNOUNCEMENT"), .string("m.call.hangup"),
        .string("normal"), .string("%@ %1$@ %%"),
        .array([]), .array([.number("1"), .string("2")]), .array([.number("-1")]), .object([:]),
    ]
    /// Keys the adapters read, to add where they were absent.
    static let edgeKeys = [
        "loc_key", "loc_args", "custom", "msg_id", "chat_id", "channel_id", "from_id", "encryption_id", "max_id",
        "messages", "edit_date", "mention", "silent", "date", "user_id", "call_id", "data", "type", "event",
        "realm_url", "message_id", "message_ids", "recipient_type", "recipient_user_ids", "topic", "stream_id",
        "trigger", "aps", "alert", "badge", "thread-id", "chat", "kind", "account", "message", "notification",
        "event_id", "room_id", "content", "counts", "unread", "prio", "devices", "id", "ids", "maxId",
        "loc-key", "loc-args", "title-loc-key", "zulip", "zulip_message_ids", "random_id", "announcement", "call_ah",
        "chat_from_id", "tweaks", "highlight", "content_body", "content_call_id", "missed_calls", "unread_count", "to",
        "body_loc_key", "google.sent_time", "topic_id", "r",
    ]

    /// A structurally mutated seed, or `nil` when the chosen seed is not JSON.
    func structuralMutant(_ random: inout SplitMix64) -> [UInt8]? {
        let seed = seeds[Int(random.next() % UInt64(seeds.count))]
        guard var tree = try? JSONParser.parse(seed) else { return nil }
        for _ in 0...Int(random.next() % 3) {
            var budget = Int(random.next() % UInt64(max(1, tree.nodeCount)))
            tree = tree.mutated(at: &budget, &random)
        }
        return Array(tree.serialized.utf8)
    }

    /// A mutated inner payload encrypted for `format` (Telegram `p` or Web Push), or `nil`.
    func encryptedMutant(_ random: inout SplitMix64, telegramKey: TelegramKey, webPushKeys: WebPushKeys) throws -> [UInt8]? {
        let inner = Array(#"{"loc_key":"MESSAGE_TEXT","loc_args":["A","hi"],"custom":{"from_id":"5","msg_id":"9"},"user_id":"14124122"}"#.utf8)
        guard var tree = try? JSONParser.parse(inner) else { return nil }
        var budget = Int(random.next() % UInt64(tree.nodeCount))
        tree = tree.mutated(at: &budget, &random)
        let plaintext = Array(tree.serialized.utf8)
        switch format {
        case .telegram:
            let p = TelegramCipherTests.encrypt(plaintext, key: telegramKey, padding: 12 + Int(random.next() % 64))
            return Array(#"{"p":"\#(p)"}"#.utf8)
        case .webpush:
            let body = try WebPushTests.encrypt(plaintext, to: webPushKeys)
            return random.next() % 2 == 0 ? body : Array(Base64URL.encode(body).utf8)
        default:
            return nil
        }
    }
}

extension JSONValue {
    /// The number of nodes in the tree.
    var nodeCount: Int {
        switch self {
        case .array(let elements): 1 + elements.reduce(0) { $0 + $1.nodeCount }
        case .object(let members): 1 + members.values.reduce(0) { $0 + $1.nodeCount }
        default: 1
        }
    }

    /// The tree with the node numbered `budget` (pre-order) replaced, emptied or extended.
    func mutated(at budget: inout Int, _ random: inout SplitMix64) -> JSONValue {
        if budget == 0 {
            budget = -1
            switch random.next() % 4 {
            case 0 where object != nil:  // add a key the adapters read
                var members = object!
                let key = Fixture.edgeKeys[Int(random.next() % UInt64(Fixture.edgeKeys.count))]
                members[key] = Fixture.edgeValues[Int(random.next() % UInt64(Fixture.edgeValues.count))]
                return .object(members)
            case 1 where object?.isEmpty == false:  // remove a key
                var members = object!
                let keys = members.keys.sorted()
                members[keys[Int(random.next() % UInt64(keys.count))]] = nil
                return .object(members)
            default:
                return Fixture.edgeValues[Int(random.next() % UInt64(Fixture.edgeValues.count))]
            }
        }
        budget -= 1
        switch self {
        case .array(let elements):
            var result: [JSONValue] = []
            for element in elements { result.append(budget >= 0 ? element.mutated(at: &budget, &random) : element) }
            return .array(result)
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for key in members.keys.sorted() {
                result[key] = budget >= 0 ? members[key]!.mutated(at: &budget, &random) : members[key]!
            }
            return .object(result)
        default:
            return self
        }
    }

    /// Compact JSON text.
    var serialized: String {
        switch self {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let text): text
        case .string(let text): Self.quoted(text)
        case .array(let elements): "[" + elements.map(\.serialized).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.keys.sorted().map { Self.quoted($0) + ":" + members[$0]!.serialized }.joined(separator: ",") + "}"
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
