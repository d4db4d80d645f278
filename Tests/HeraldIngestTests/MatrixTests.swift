import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

@Suite("Matrix")
struct MatrixTests {
    static let room = "!slw48wfj34rtnrf:example.com"
    /// SHA-256 of the event id, first 8 bytes big-endian, top bit cleared (computed with Python's hashlib).
    static let eventObjectId: Int64 = 8_219_313_229_398_616_502

    func decode(_ name: String) throws -> [Event] {
        try Ingest.decode(try Samples.bytes(name), format: nil, context: context(account: "@me:example.com")).events
    }

    @Test func fullNotification() throws {
        #expect(try decode("matrix/sygnal-notification.json") == [
            Event(account: "@me:example.com", .notify(Event.Notify(
                chat: Self.room, kind: .message, id: Self.eventObjectId, date: receivedAt,
                title: "Major Tom @ Mission Control", body: "I'm floating in a most peculiar way.", sender: "Major Tom"))),
            Event(account: "@me:example.com", .note(source: "matrix", reason: "counts: unread 2, missed_calls 1")),
        ])
    }

    @Test func eventIdOnlyIsPartialWithTheSameIdentity() throws {
        let partial = try decode("matrix/sygnal-event-id-only.json")
        #expect(partial == [
            Event(account: "@me:example.com", .notify(Event.Notify(
                chat: Self.room, kind: .message, id: Self.eventObjectId, date: receivedAt, partial: true))),
            Event(account: "@me:example.com", .note(source: "matrix", reason: "counts: unread 2")),
        ])
        let full = try decode("matrix/sygnal-notification.json")
        #expect(Identity(partial[0]) == Identity(full[0]))
    }

    @Test func badgeOnlyIsANoteWithTheUnreadCount() throws {
        #expect(try decode("matrix/sygnal-badge-only.json") == [
            Event(account: "@me:example.com", .note(source: "matrix", reason: "counts: unread 2"))
        ])
    }

    @Test func errorsNameTheField() throws {
        let bytes = try Samples.bytes("matrix/sygnal-notification.json")
        #expect(throws: IngestError(format: .matrix, field: "account", reason: "the payload names no account and the context gives none (IngestContext.account)")) {
            try Ingest.decode(bytes, format: .matrix, context: context())
        }
        #expect(ingestError(#"{"notification":{"event_id":"$x","devices":[]}}"#, nil, context(account: "a"))?.field == "notification.room_id")
        #expect(ingestError(#"{"notification":{"event_id":"$x","room_id":"!r","content":{"body":5},"devices":[]}}"#, nil, context(account: "a"))?.field
            == "notification.content.body")
        #expect(ingestError(#"{"notification":{"counts":{"unread":"many"},"devices":[]}}"#, nil, context(account: "a"))?.field == "notification.counts.unread")
    }
}
