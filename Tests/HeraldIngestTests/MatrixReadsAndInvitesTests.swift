import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldIngest

/// SEMANTICS 1.2 events from Matrix pushes: the badge push after the user read everything, an
/// invite, and an edit whose `partial` matches the notification it edits.
///
/// Bodies are written from: Synapse's HTTP pusher (`synapse/push/httppusher.py`:
/// `_send_badge` posts `{"notification":{"id":"","type":null,"sender":"","counts":{"unread":N},
/// "devices":[…]}}` with no `event_id` when the badge changes without an event, N = 0 once
/// the user has read everything; `dispatch_push_event` adds `membership` and `user_is_target`
/// for `m.room.member` events), the Matrix Push Gateway API (`user_is_target`: the receiving
/// user is the member event's `state_key`), the client-server spec's `m.room.member` and
/// "Event replacements" (`m.replace`), and Sygnal's FCM data (`gcmpushkin.py`, every value a
/// string). The Synapse badge body is the one issue 33 quotes, as Synapse sent it to
/// `herald serve`.
@Suite("Matrix: reads, invites and edits under SEMANTICS 1.2")
struct MatrixReadsAndInvitesTests {
    static let me = "@me:example.org"
    let a = context(account: "@me:example.org")

    /// Synapse's badge push after the user read everything (issue 33), devices filled in as
    /// `_send_badge` writes them.
    static let synapseAllRead =
        #"{"notification":{"counts":{"unread":0},"devices":[{"app_id":"org.herald.test","pushkey":"https://herald.example/push","pushkey_ts":1764230000,"data":{"format":"event_id_only"},"tweaks":{}}],"id":"","sender":"","type":null}}"#

    @Test func synapsesAllReadBadgeIsAReadAllOfTheAccount() throws {
        #expect(try events(Self.synapseAllRead, nil, a) == [Event(account: Self.me, .readAll(chat: nil))])
        #expect(try Ingest.decode(Self.synapseAllRead, format: nil, context: a).format == .matrix)
    }

    @Test(arguments: [
        // event_id absent, as Synapse sends it.
        #"{"notification":{"counts":{"unread":0},"devices":[{"app_id":"im.app","pushkey":"k"}]}}"#,
        // event_id empty, as some gateways forward it.
        #"{"notification":{"event_id":"","counts":{"unread":0,"missed_calls":0},"devices":[{"app_id":"im.app","pushkey":"k"}]}}"#,
        // Sygnal's FCM v1 data for the same badge push: values are strings.
        #"{"message":{"data":{"prio":"high","unread":"0","missed_calls":"0"},"token":"t"}}"#,
    ])
    func everyFormOfTheZeroBadgeReadsAll(line: String) throws {
        #expect(try events(line, nil, a) == [Event(account: Self.me, .readAll(chat: nil))])
    }

    @Test func sygnalsFlatWebPushBadgeOfZeroReadsAll() throws {
        // `webpushpushkin.py` `_build_payload` of a badge-only notification: counts and prio only.
        #expect(try events(#"{"unread":0,"prio":"high"}"#, .matrix, a) == [Event(account: Self.me, .readAll(chat: nil))])
    }

    @Test func aMissedCallCountBesideTheZeroBadgeStaysANote() throws {
        let line = #"{"notification":{"counts":{"unread":0,"missed_calls":2},"devices":[]}}"#
        #expect(
            try events(line, .matrix, a) == [
                Event(account: Self.me, .readAll(chat: nil)),
                Event(account: Self.me, .note(source: "matrix", reason: "counts: missed_calls 2")),
            ])
    }

    @Test func aBadgeAboveZeroNamesNoRoomAndStaysANote() throws {
        let line = #"{"notification":{"counts":{"unread":3},"devices":[],"id":"","sender":"","type":null}}"#
        #expect(try events(line, .matrix, a) == [Event(account: Self.me, .note(source: "matrix", reason: "counts: unread 3"))])
    }

    @Test func aZeroCountBesideAnEventNeverReadsAll() throws {
        // The event itself is unread: a zero beside it is the homeserver's race, not a read.
        let line =
            #"{"notification":{"event_id":"$e","room_id":"!r:example.org","type":"m.room.message","sender":"@b:example.org","content":{"body":"x"},"counts":{"unread":0},"devices":[]}}"#
        let result = try events(line, .matrix, a)
        #expect(result.count == 2)
        #expect(result.last == Event(account: Self.me, .note(source: "matrix", reason: "counts: unread 0")))
        #expect(!result.contains { $0.type == .readAll })
    }

    /// Synapse's full-format push of an invite of `@me:example.org` into "Room".
    static let invite =
        #"{"notification":{"event_id":"$inv1:example.org","room_id":"!room:example.org","type":"m.room.member","sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Room","membership":"invite","user_is_target":true,"content":{"membership":"invite","displayname":"Me"},"prio":"high","counts":{"unread":1},"devices":[{"app_id":"im.app","pushkey":"k","tweaks":{"sound":"default"}}]}}"#

    @Test func anInviteReadsAsOne() throws {
        #expect(
            try events(Self.invite, nil, a) == [
                Event(
                    account: Self.me,
                    .notify(
                        Event.Notify(
                            chat: "!room:example.org", kind: .message, id: StableID.of("$inv1:example.org"), date: receivedAt,
                            title: "Room", body: "Alice invited you to Room", sender: "Alice"))),
                Event(account: Self.me, .note(source: "matrix", reason: "counts: unread 1")),
            ])
    }

    @Test func anInviteNamedByStateKeyToAPrefixedAccount() throws {
        // No user_is_target and no top-level membership; no room name either.
        let line =
            #"{"notification":{"event_id":"$inv2","room_id":"!r2:example.org","type":"m.room.member","sender":"@bob:example.org","state_key":"@me:example.org","content":{"membership":"invite"},"devices":[]}}"#
        guard case .notify(let notify)? = try events(line, .matrix, context(account: "mx:@me:example.org")).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.title == "@bob:example.org")
        #expect(notify.body == "@bob:example.org invited you")
    }

    @Test func sygnalsFCMInviteNamesNoTargetAndIsTheUsers() throws {
        // gcmpushkin.py `_build_data`: membership at the top level, content flattened, no target.
        let line =
            #"{"message":{"data":{"event_id":"$inv3:example.org","type":"m.room.member","sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Lunch","membership":"invite","content_membership":"invite","room_id":"!lunch:example.org","prio":"high","unread":"1"},"token":"t"}}"#
        guard case .notify(let notify)? = try events(line, nil, a).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.body == "Alice invited you to Lunch")
    }

    @Test(arguments: [
        // Someone else is invited.
        #""user_is_target":false,"state_key":"@carol:example.org","content":{"membership":"invite"}"#,
        // A state key that only ends like the user's id.
        #""state_key":"@e:example.org","content":{"membership":"invite"}"#,
        // The user joined rather than being invited.
        #""user_is_target":true,"content":{"membership":"join"}"#,
    ])
    func otherMemberEventsAreNotInvites(fields: String) throws {
        let line =
            #"{"notification":{"event_id":"$m","room_id":"!r:example.org","type":"m.room.member","sender":"@alice:example.org",\#(fields),"devices":[]}}"#
        guard case .notify(let notify)? = try events(line, .matrix, a).first?.payload else {
            Issue.record("expected a notify")
            return
        }
        #expect(notify.body == nil)
        #expect(notify.title == "@alice:example.org")
    }

    @Test func aPushedEditHasThePartialOfThePushedMessageItEdits() throws {
        let message =
            #"{"notification":{"event_id":"$e1","room_id":"!r:example.org","type":"m.room.message","sender":"@alice:example.org","content":{"msgtype":"m.text","body":"helo"},"devices":[]}}"#
        let edit =
            #"{"notification":{"event_id":"$e2","room_id":"!r:example.org","type":"m.room.message","sender":"@alice:example.org","content":{"msgtype":"m.text","body":"* hello","m.new_content":{"msgtype":"m.text","body":"hello"},"m.relates_to":{"rel_type":"m.replace","event_id":"$e1"}},"devices":[]}}"#
        guard case .notify(let notify)? = try events(message, .matrix, a).first?.payload,
            case .edit(let change)? = try events(edit, .matrix, a).first?.payload
        else {
            Issue.record("expected a notify and an edit")
            return
        }
        // SEMANTICS 1.2: an edit applies only to a notification of the same `partial`.
        #expect(change.partial == notify.partial)
        #expect(change.id == notify.id && change.chat == notify.chat)
        #expect(change.body == "hello")
    }
}
