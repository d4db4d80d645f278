import HeraldEvents
import HeraldTestSupport


/// SplitMix64 canonical lines and damaged versions of them.
enum Generator {
    static let strings = ["", "a", "c", "chat:9", "тест 🚀", "Ärger \"q\" \\ b", "line1\nline2\t\u{1}", "𝄞", "新", "\u{0}", "é"]
    static let ids: [Int64] = [1, 2, 42, .max, 0, -1, 1_700_000_000]

    /// A random event, valid or not, in its canonical form.
    static func event(_ random: inout SplitMix64) -> Event {
        func s() -> String { strings.randomElement(using: &random)! }
        func o() -> String? { Bool.random(using: &random) ? s() : nil }
        func i() -> Int64 { ids.randomElement(using: &random)! }
        let kind = NotificationKind.allCases.randomElement(using: &random)!
        let account = Bool.random(using: &random) ? "tg:\(random.next() % 100)" : s()
        let payload: Event.Payload
        switch random.next() % 17 {
        case 0:
            payload = .notify(
                .init(
                    chat: s(), kind: kind, id: i(), date: i(), silent: .random(using: &random),
                    partial: .random(using: &random), unreadOnly: .random(using: &random),
                    title: o(), body: o(), sender: o(), thread: o()))
        case 1: payload = .edit(.init(chat: s(), kind: kind, id: i(), title: o(), body: o(), partial: .random(using: &random)))
        case 2: payload = .read(chat: s(), maxId: i())
        case 3: payload = .delete(ids: (0..<random.next() % 4).map { _ in i() }, chat: o())
        case 4: payload = .readReactions(chat: s(), ids: [i(), i()])
        case 5: payload = .endCall(chat: s(), id: i())
        case 6: payload = .dismiss(notificationId: i())
        case 7: payload = .dismissGroup(groupId: i(), maxNotificationId: Bool.random(using: &random) ? i() : nil)
        case 8:
            payload = .options(
                groupCountMax: Int(random.next() % 30), groupSizeMax: Bool.random(using: &random) ? Int(random.next() % 30) : nil)
        case 9: payload = .chatSettings(.init(chat: s(), muted: .random(using: &random), disablePinned: .random(using: &random)))
        case 10: payload = .revoke
        case 11: payload = .note(source: o(), reason: o())
        // SEMANTICS 1.2.
        case 12: payload = .readAll(chat: o())
        case 13: payload = .readMentions(chat: s(), ids: Bool.random(using: &random) ? (0..<random.next() % 3).map { _ in i() } : nil)
        case 14: payload = .clearHistory(chat: s(), maxId: i())
        case 15: payload = .tick(now: i())
        default:
            payload = .chatSettings(
                .init(
                    chat: s(), mutedUntil: Bool.random(using: &random) ? i() : nil,
                    disableMentions: Bool.random(using: &random) ? .random(using: &random) : nil))
        }
        return Event(account: account, payload)
    }

    /// A random line: canonical, or with unknown keys and extra whitespace.
    static func line(_ random: inout SplitMix64) -> [UInt8] {
        let event = event(&random)
        var writer = JSONWriter()
        switch random.next() % 6 {
        case 0, 1:
            event.writeJSON(to: &writer) { writer in
                writer.key("seq"); writer.int(Int64(random.next() % 1000))
                writer.key("x"); writer.string("unknown")
            }
        case 2:
            // A field that other types take, which this one ignores or must reject alongside
            // its own (a delete with ids and maxId, a chatSettings with muted and mutedUntil).
            let extra = random.next() % 5
            event.writeJSON(to: &writer) { writer in
                switch extra {
                case 0: writer.key("maxId"); writer.int(5)
                case 1: writer.key("muted"); writer.bool(true)
                case 2: writer.key("mutedUntil"); writer.int(9)
                case 3: writer.key("ids"); writer.ints([3])
                default: writer.key("now"); writer.int(1)
                }
            }
        default:
            event.writeJSON(to: &writer)
        }
        var bytes = Array(writer.string.utf8)
        if random.next() % 4 == 0 {
            // Whitespace after some structural characters.
            bytes = bytes.flatMap { byte -> [UInt8] in
                [UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "{")].contains(byte) && random.next() % 2 == 0
                    ? [byte, 0x20, 0x0A] : [byte]
            }
        }
        return bytes
    }

    /// Fragments that push a parser towards its edges.
    static let fragments: [String] = [
        "\\u00e9", "\\ud83d\\ude80", "\\ud83d", "\\ude80", "\\u", "\\", "\"", "1.0", "1e2", "-0", "01", "null", "true",
        ",", ":", "{", "}", "[", "]", " ", "\n", "9223372036854775808", "\"x\":[1,{\"y\":null}],", "\"title\":\"t\",",
        "\"id\":5,", "\u{1}", "é", "🚀", "[[[[[[[[", "\"seq\":1,",
    ]

    /// A random line with one to three mutations: byte flips, insertions, deletions, truncation.
    static func mutant(_ random: inout SplitMix64) -> [UInt8] {
        var bytes = line(&random)
        for _ in 0...(random.next() % 3) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 6 {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            case 1: bytes.insert(contentsOf: Array(fragments.randomElement(using: &random)!.utf8), at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3: bytes.removeSubrange(position...)
            case 4: bytes.insert([0xFF, 0xC3, 0x80, 0xED, 0xF4][Int(random.next() % 5)], at: position)
            default:
                // Duplicate a key/value pair.
                if let comma = bytes.firstIndex(of: UInt8(ascii: ",")), let next = bytes[(comma + 1)...].firstIndex(of: UInt8(ascii: ",")) {
                    bytes.insert(contentsOf: bytes[comma..<next], at: next)
                }
            }
        }
        return bytes
    }
}
