import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// Redactions and edits act on the object an earlier event's `notify` created.
@Suite("Matrix redactions and edits")
struct MatrixRelationTests {
    /// A push gateway body for `fields` inside `notification`.
    static func body(_ fields: String) -> String {
        #"{"notification":{"room_id":"!r:x","sender":"@a:x",\#(fields),"devices":[]}}"#
    }

    /// The object the `notify` of event `$e1` in `!r:x` creates.
    static func original() throws -> Identity {
        let line = body(#""event_id":"$e1","type":"m.room.message","content":{"body":"hi"}"#)
        return try #require(try events(line, .matrix, context(account: "m")).first.flatMap(Identity.init))
    }

    @Test(arguments: [
        #""event_id":"$e3","type":"m.room.redaction","content":{"redacts":"$e1"}"#,
        #""event_id":"$e3","type":"m.room.redaction","redacts":"$e1","content":{}"#,
        #""event_id":"$e3","type":"m.room.redaction","redacts":"$e1""#,
    ])
    func aRedactionDeletesTheRedactedEvent(fields: String) throws {
        let original = try Self.original()
        #expect(try events(Self.body(fields), nil, context(account: "m")) == [
            Event(account: "m", .delete(ids: [original.id], chat: original.chat))
        ])
        #expect(original.id == StableID.of("$e1"))
    }

    @Test func aRedactionWithoutRedactsIsRejected() throws {
        let line = Self.body(#""event_id":"$e3","type":"m.room.redaction","content":{}"#)
        #expect(ingestError(line, .matrix, context(account: "m")) == IngestError(
            format: .matrix, field: "notification.content.redacts", reason: "missing: a redaction names the event it redacts"))
    }

    @Test func anEditReplacesTheOriginalsBody() throws {
        let original = try Self.original()
        let line = Self.body(#"""
            "event_id":"$e2","type":"m.room.message","content":{"msgtype":"m.text","body":"* hello",\#
            "m.new_content":{"msgtype":"m.text","body":"hello"},"m.relates_to":{"rel_type":"m.replace","event_id":"$e1"}}
            """#)
        #expect(try events(line, nil, context(account: "m")) == [
            Event(account: "m", .edit(Event.Edit(chat: original.chat, kind: .message, id: original.id, title: "@a:x", body: "hello")))
        ])
        // Without m.new_content the fallback body is used.
        let fallback = Self.body(#""event_id":"$e2","content":{"body":"* hello","m.relates_to":{"rel_type":"m.replace","event_id":"$e1"}}"#)
        #expect(try events(fallback, nil, context(account: "m")) == [
            Event(account: "m", .edit(Event.Edit(chat: original.chat, kind: .message, id: original.id, title: "@a:x", body: "* hello")))
        ])
    }

    @Test func otherRelationsStayNotifications() throws {
        let reply = Self.body(#""event_id":"$e4","type":"m.room.message","content":{"body":"re","m.relates_to":{"m.in_reply_to":{"event_id":"$e1"}}}"#)
        guard case .notify(let notify) = try events(reply, nil, context(account: "m")).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.id == StableID.of("$e4"))
        let noTarget = Self.body(#""event_id":"$e2","content":{"m.relates_to":{"rel_type":"m.replace"}}"#)
        #expect(ingestError(noTarget, nil, context(account: "m"))?.field == "notification.content.m.relates_to.event_id")
    }
}
