import Foundation
import HeraldStore
import HeraldTestSupport
import Testing

/// `POST /_matrix/push/v1/notify` with the request bodies of the Push Gateway specification.
@Suite("serve: Matrix push gateway", .serverThreads)
struct MatrixGatewayTests {
    /// The example request of the Push Gateway API (`/_matrix/push/v1/notify`), with the
    /// devices' pushkeys given.
    static func notify(pushkeys: [String]) -> String {
        let devices = pushkeys.map { key in
            #"{"app_id":"org.matrix.matrixConsole.ios","pushkey":"\#(key)","pushkey_ts":12345678,"data":{},"tweaks":{"sound":"bing"}}"#
        }.joined(separator: ",")
        return #"""
        {"notification":{"event_id":"$3957tyerfgewrf384","room_id":"!slw48wfj34rtnrf:example.com","type":"m.room.message","sender":"@exampleuser:matrix.org","sender_display_name":"Major Tom","room_name":"Mission Control","room_alias":"#exampleroom:matrix.org","prio":"high","content":{"msgtype":"m.text","body":"I'm floating in a most peculiar way."},"counts":{"unread":2,"missed_calls":1},"devices":[\#(devices)]}}
        """#
    }

    /// One push as Synapse's HTTP pusher sends it (`synapse/push/httppusher.py`: `id` and
    /// `event_id` both, `prio`, `counts.unread` the user's badge, the device with its data).
    static func synapsePush(event: String, room: String, sender: String, body: String, badge: Int, mention: Bool = false) -> String {
        let prio = mention ? "high" : "low"
        return #"""
        {"notification":{"id":"\#(event)","event_id":"\#(event)","room_id":"\#(room)","type":"m.room.message","sender":"\#(sender)","prio":"\#(prio)","counts":{"unread":\#(badge)},"devices":[{"app_id":"im.herald.test","pushkey":"pk-synapse","pushkey_ts":1764230000,"data":{},"tweaks":{"sound":"default"\#(mention ? #","highlight":true"# : "")}}],"content":{"msgtype":"m.text","body":"\#(body)"},"sender_display_name":"Alice","room_name":"Room \#(room.dropFirst().prefix(5))"}}
        """#
    }

    @Test("SEMANTICS 1.2: Synapse's badge-only push after the user read everything clears the account")
    func synapseReadEverything() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        #expect(try await server.request(.POST, "/v1/admin/pushkeys", body: #"{"pushkey":"pk-synapse","account":"mx:@bob:example.org"}"#).status == 201)
        let pushes = [
            Self.synapsePush(event: "$e1", room: "!room1:example.org", sender: "@alice:example.org", body: "one", badge: 1),
            Self.synapsePush(event: "$e2", room: "!room1:example.org", sender: "@alice:example.org", body: "bob: two", badge: 2, mention: true),
            Self.synapsePush(event: "$e3", room: "!room2:example.org", sender: "@alice:example.org", body: "three", badge: 3),
            Self.synapsePush(event: "$e4", room: "!room2:example.org", sender: "@alice:example.org", body: "bob: four", badge: 4, mention: true),
            Self.synapsePush(event: "$e5", room: "!room2:example.org", sender: "@alice:example.org", body: "five", badge: 5),
        ]
        for push in pushes {
            #expect(try await server.request(.POST, "/_matrix/push/v1/notify", body: push, token: nil).status == 200)
        }
        func account() async throws -> [String: Any]? {
            let state = object(try await server.request(.GET, "/v1/accounts/mx:@bob:example.org/state").body)
            return (state["accounts"] as? [[String: Any]])?.first
        }
        let before = try await account()
        #expect((before?["unread"] as? [String: Any])?["unread"] as? Int == 5)
        #expect((before?["groups"] as? [[String: Any]])?.isEmpty == false)
        // The body Synapse sends when the user has read everything (quoted in issue 33).
        let read = #"{"notification":{"counts":{"unread":0},"devices":[{"app_id":"im.herald.test","pushkey":"pk-synapse","pushkey_ts":1764230000,"data":{}}],"id":"","sender":"","type":null}}"#
        #expect(try await server.request(.POST, "/_matrix/push/v1/notify", body: read, token: nil).status == 200)
        let after = try await account()
        let unread = after?["unread"] as? [String: Any]
        #expect(unread?["unread"] as? Int == 0 && unread?["badge"] as? Int == 0 && unread?["unreadMentions"] as? Int == 0, "\(unread ?? [:])")
        #expect((after?["groups"] as? [[String: Any]])?.isEmpty == true, "what the homeserver says: nothing unread, nothing shown")
        // A redelivered push of a message read since stays read.
        #expect(try await server.request(.POST, "/_matrix/push/v1/notify", body: pushes[0], token: nil).status == 200)
        #expect((try await account()?["groups"] as? [[String: Any]])?.isEmpty == true)
        await server.stop()
    }

    @Test("registered pushkeys store the notification for their account; unregistered ones are rejected")
    func notifyStoresAndRejects() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        let registered = try await server.request(
            .POST, "/v1/admin/pushkeys", body: #"{"pushkey":"V2h5IG9uIGVhcnRoIGRpZCB5b3UgZGVjb2RlIHRoaXM/","account":"mx:tom"}"#)
        #expect(registered.status == 201)
        // The gateway endpoint takes no bearer token: the pushkey authenticates.
        let response = try await server.request(
            .POST, "/_matrix/push/v1/notify", body: Self.notify(pushkeys: ["V2h5IG9uIGVhcnRoIGRpZCB5b3UgZGVjb2RlIHRoaXM/", "unknown-key"]),
            token: nil)
        #expect(response.status == 200)
        #expect(object(response.body)["rejected"] as? [String] == ["unknown-key"])

        let nobody = try await server.request(.POST, "/_matrix/push/v1/notify", body: Self.notify(pushkeys: ["other"]), token: nil)
        #expect(object(nobody.body)["rejected"] as? [String] == ["other"])
        // Registered for another app: rejected.
        #expect(try await server.request(.POST, "/v1/admin/pushkeys", body: #"{"pushkey":"pk-other-app","account":"mx:tom","app_id":"im.other"}"#).status == 201)
        let otherApp = try await server.request(.POST, "/_matrix/push/v1/notify", body: Self.notify(pushkeys: ["pk-other-app"]), token: nil)
        #expect(object(otherApp.body)["rejected"] as? [String] == ["pk-other-app"])
        let malformed = try await server.request(.POST, "/_matrix/push/v1/notify", body: #"{"notification":{}}"#, token: nil)
        #expect(malformed.status == 400)

        let state = object(try await server.request(.GET, "/v1/accounts/mx:tom/state").body)
        let account = (state["accounts"] as? [[String: Any]])?.first
        let groups = account?["groups"] as? [[String: Any]]
        let notification = (groups?.first?["notifications"] as? [[String: Any]])?.first
        #expect(notification?["body"] as? String == "I'm floating in a most peculiar way.")
        await server.stop()
        let records = try await Store(path: directory.path).history.records()
        #expect(Set(records.map(\.event.account)) == ["mx:tom"])
        #expect(records.allSatisfy { $0.source.format == "matrix" })
    }

    @Test("pushkeys registered with the CLI (herald serve pushkeys) are accepted; removed ones rejected")
    func cliRegistration() async throws {
        let directory = TemporaryDirectory("serve")
        let added = try run(ServeProcessTests.executable, ["serve", "pushkeys", "add", "--store", directory.path, "--pushkey", "pk-cli", "--account", "mx:cli"])
        #expect(added.status == 0, "\(added.output)")
        let listed = try run(ServeProcessTests.executable, ["serve", "pushkeys", "list", "--store", directory.path])
        #expect(listed.output.contains("pk-cli\tmx:cli"))
        let server = try await LiveServer(path: directory.path)
        let accepted = try await server.request(.POST, "/_matrix/push/v1/notify", body: Self.notify(pushkeys: ["pk-cli"]), token: nil)
        #expect(object(accepted.body)["rejected"] as? [String] == [])
        let seqAfterAccepted = object(try await server.request(.GET, "/v1/accounts/mx:cli/counts").body)["seq"] as? Int
        #expect((seqAfterAccepted ?? 0) > 0)
        // Removed beside the running server (another process): rejected from the next request on.
        let removed = try run(ServeProcessTests.executable, ["serve", "pushkeys", "remove", "--store", directory.path, "--pushkey", "pk-cli"])
        #expect(removed.status == 0, "\(removed.output)")
        let rejected = try await server.request(.POST, "/_matrix/push/v1/notify", body: Self.notify(pushkeys: ["pk-cli"]), token: nil)
        #expect(object(rejected.body)["rejected"] as? [String] == ["pk-cli"])
        let state = object(try await server.request(.GET, "/v1/accounts/mx:cli/counts").body)
        #expect(state["seq"] as? Int == seqAfterAccepted)
        await server.stop()
    }
}
