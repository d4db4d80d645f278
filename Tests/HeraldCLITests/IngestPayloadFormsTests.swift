import Foundation
import HeraldTestSupport
import Testing

/// Issue 24 end to end: device and gateway payloads, ingested with `--format auto`, leave the
/// store's state as a client would show it (call notifications clear when the call ends,
/// read Zulip messages leave).
@Suite("herald ingest: device and gateway payload forms", .processThreads)
struct IngestPayloadFormsTests {
    /// Ingests `lines` into a fresh store for `account` and returns `herald state --json`.
    func state(after lines: [String], account: String) throws -> String {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        for line in lines {
            let run = try CLI.run(["ingest", "--store", store, "--format", "auto", "--account", account, "-"], input: line + "\n")
            #expect(run.status == 0, "\(run.stderr)")
        }
        return try CLI.run(["state", "--store", store, "--account", account, "--json"]).stdout
    }

    /// TDLib's NotificationManager.cpp treats PHONE_CALL_* and VIDEO_CALL_* together.
    @Test("a missed Telegram call clears the call notification")
    func telegramCallEnds() throws {
        let request = #"{"loc_key":"VIDEO_CALL_REQUEST","loc_args":["Ada"],"custom":{"from_id":"5","call_id":"6001"}}"#
        #expect(try state(after: [request], account: "tg:1").contains(#""kind":"call""#))
        let missed = #"{"loc_key":"VIDEO_CALL_MISSED","loc_args":["Ada"],"custom":{"from_id":"5","call_id":"6001"}}"#
        #expect(try state(after: [request, missed], account: "tg:1").contains(#""groups":[]"#))
    }

    /// Matrix "Voice over IP": an m.call.hangup names its call by content.call_id; Sygnal's FCM
    /// v1 data flattens it to content_call_id.
    @Test("a Matrix hang-up clears the call an invite rang, across gateway forms")
    func matrixCallEnds() throws {
        let invite =
            #"{"notification":{"event_id":"$inv","room_id":"!r:x","type":"m.call.invite","sender":"@a:x","content":{"call_id":"c-1","version":"1"},"devices":[]}}"#
        #expect(try state(after: [invite], account: "@me:x").contains(#""kind":"call""#))
        let hangup =
            #"{"message":{"data":{"event_id":"$h","room_id":"!r:x","type":"m.call.hangup","content_call_id":"c-1","prio":"high"},"token":"t"}}"#
        #expect(try state(after: [invite, hangup], account: "@me:x").contains(#""groups":[]"#))
    }

    /// zerver/lib/push_notifications.py: the APNs message and its remove payload.
    @Test("a Zulip message read elsewhere leaves the iOS notifications")
    func zulipRemoveClears() throws {
        let base = #""realm_url":"https://z.example","realm_uri":"https://z.example","user_id":7"#
        let message =
            #"{"aps":{"alert":{"title":"Ada","subtitle":"","body":"lunch?"},"badge":0},"zulip":{\#(base),"sender_id":12,"time":1700000000,"recipient_type":"private","message_ids":[501]}}"#
        let account = "zulip:https://z.example/|7"
        #expect(try state(after: [message], account: account).contains("lunch?"))
        let remove = #"{"aps":{"badge":0},"zulip":{\#(base),"event":"remove","zulip_message_ids":"501"}}"#
        let after = try state(after: [message, remove], account: account)
        #expect(!after.contains("lunch?"))
        #expect(after.contains(#""groups":[]"#))
    }
}
