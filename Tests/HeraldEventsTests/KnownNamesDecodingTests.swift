import HeraldEvents
import HeraldTestSupport
import Testing

/// `Event.init(from:knownAccount:knownChat:)`, the rebuild's decoder for events whose names
/// it has met before, against `init(from:)`: the same event, or both throw.
@Suite("Decoding with known names")
struct KnownNamesDecodingTests {
    /// Decodes `bytes` both ways, the names known as those of `names` (a valid event), when
    /// the bytes name them; expects the same outcome.
    static func expectSameOutcome(_ bytes: [UInt8], names: Event) {
        bytes.withUnsafeBytes { buffer in
            let plain = try? Event(exactly: buffer)
            guard let encoded = try? Event.encodedNames(ByteReader(buffer)),
                encoded.account.elementsEqual(names.account.utf8),
                (encoded.chat.map { Array($0) }) == names.chat.map({ Array($0.utf8) })
            else { return }
            #expect(decodeKnown(bytes, account: names.account, chat: names.chat) == plain, "\(bytes)")
        }
    }

    /// The event that `bytes` hold exactly, decoded with the names given; `nil` when refused.
    static func decodeKnown(_ bytes: [UInt8], account: String, chat: String?) -> Event? {
        bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            guard let event = try? Event(from: &reader, knownAccount: account, knownChat: chat), reader.isAtEnd else { return nil }
            return event
        }
    }

    @Test("valid events decode to the same event", arguments: Samples.everyType)
    func validEvents(event: Event) {
        #expect(Self.decodeKnown(event.binary, account: event.account, chat: event.chat) == event)
        Self.expectSameOutcome(event.binary, names: event)
    }

    @Test("invalid fields throw both ways", arguments: Samples.invalidFields)
    func invalidFields(event: Event) {
        #expect(throws: ByteReader.Malformed.self) { try Event(binary: event.binary) }
        Self.expectSameOutcome(event.binary, names: event)
    }

    @Test("truncated and damaged bytes: the same outcome both ways")
    func damaged() {
        var rng = SystemRandomNumberGenerator()
        for event in Samples.everyType + Samples.invalidFields {
            let bytes = event.binary
            for length in 0..<bytes.count { Self.expectSameOutcome(Array(bytes[..<length]), names: event) }
            Self.expectSameOutcome(bytes + [0], names: event)
            for _ in 0..<300 {
                var damaged = bytes
                damaged[Int.random(in: 0..<damaged.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                Self.expectSameOutcome(damaged, names: event)
            }
        }
    }
}

extension Samples {
    /// Events that encode but do not validate: every field `validate()` checks besides the
    /// names, out of its range.
    static let invalidFields: [Event] = [
        Event(account: Samples.account, .notify(.init(chat: "c", kind: .message, id: 0, date: 1))),
        Event(account: Samples.account, .notify(.init(chat: "c", kind: .message, id: -5, date: 1, title: "t"))),
        Event(account: Samples.account, .notify(.init(chat: "c", kind: .message, id: 1, date: -1, body: "b"))),
        Event(account: Samples.account, .edit(.init(chat: "c", kind: .message, id: 0, title: "t"))),
        Event(account: Samples.account, .read(chat: "c", maxId: 0)),
        Event(account: Samples.account, .delete(ids: [], chat: nil)),
        Event(account: Samples.account, .delete(ids: [1, 0], chat: "c")),
        Event(account: Samples.account, .readReactions(chat: "c", ids: [])),
        Event(account: Samples.account, .readReactions(chat: "c", ids: [-1])),
        Event(account: Samples.account, .endCall(chat: "c", id: -1)),
        Event(account: Samples.account, .dismiss(notificationId: 0)),
        Event(account: Samples.account, .dismissGroup(groupId: 0, maxNotificationId: nil)),
        Event(account: Samples.account, .dismissGroup(groupId: 1, maxNotificationId: 0)),
        Event(account: Samples.account, .options(groupCountMax: 26, groupSizeMax: nil)),
        Event(account: Samples.account, .options(groupCountMax: nil, groupSizeMax: 0)),
        Event(account: Samples.account, .options(groupCountMax: 3, groupSizeMax: 26)),
        // SEMANTICS 1.2.
        Event(account: Samples.account, .notify(.init(chat: "c", kind: .message, id: 0, date: 1, unreadOnly: true))),
        Event(account: Samples.account, .readMentions(chat: "c", ids: [])),
        Event(account: Samples.account, .readMentions(chat: "c", ids: [3, 0])),
        Event(account: Samples.account, .clearHistory(chat: "c", maxId: 0)),
        Event(account: Samples.account, .clearHistory(chat: "c", maxId: -1)),
        Event(account: Samples.account, .tick(now: -1)),
        Event(account: Samples.account, .chatSettings(.init(chat: "c", mutedUntil: -1))),
        Event(account: Samples.account, .chatSettings(.init(chat: "c", mutedUntil: .min, disablePinned: true))),
    ]
}
