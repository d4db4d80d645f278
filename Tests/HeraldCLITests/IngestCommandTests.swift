import Foundation
import Testing
import HeraldTestSupport

@Suite("herald ingest: stored keys and framing", .processThreads)
struct IngestCommandTests {
    /// The published Telegram vector: its key and its pushes, one line each.
    static func telegramVector() throws -> (key: String, lines: String) {
        let data = try Data(contentsOf: URL(fileURLWithPath: Shared.path("payloads/telegram/encrypted-push-vector.json")))
        let vector = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let key = try #require(vector["key_base64url"] as? String)
        let pushes = try #require(vector["pushes"] as? [[String: Any]])
        let lines = try pushes.map { push in
            String(decoding: try JSONSerialization.data(withJSONObject: try #require(push["payload"])), as: UTF8.self)
        }
        return (key, lines.joined(separator: "\n") + "\n")
    }

    @Test("an encrypted push belongs to the account its stored key was added with")
    func storedKeyAccount() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let (key, lines) = try Self.telegramVector()
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", key]).status == 0)

        let clash = try CLI.run(["ingest", "--store", store, "--format", "auto", "--account", "tg:2", "-"], input: lines)
        #expect(clash.status == 3)
        #expect(clash.stderr.contains(#"-:1: account: decrypted with key 2886285856283441188 of account "tg:1", not "tg:2", the context's account (IngestContext.account)"#))
        #expect(clash.stderr.contains("0 events appended"))

        let opened = try CLI.run(["ingest", "--store", store, "--format", "auto", "-"], input: lines)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stderr.contains("2 events appended"))
        let state = try CLI.run(["state", "--store", store, "--account", "tg:1", "--json"])
        #expect(state.stdout.contains("abcdefg"))
    }

    @Test("a Matrix edit changes the notification's body and a redaction clears it")
    func matrixEditAndRedaction() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        func push(_ fields: String) -> String {
            #"{"notification":{"room_id":"!r:x","sender":"@a:x",\#(fields),"devices":[]}}"# + "\n"
        }
        let ingest = ["ingest", "--store", store, "--format", "auto", "--account", "m", "-"]
        #expect(try CLI.run(ingest, input: push(#""event_id":"$e1","type":"m.room.message","content":{"body":"frist"}"#)).status == 0)
        let edit = push(#""event_id":"$e2","type":"m.room.message","content":{"body":"* first","m.new_content":{"body":"first"},"m.relates_to":{"rel_type":"m.replace","event_id":"$e1"}}"#)
        #expect(try CLI.run(ingest, input: edit).status == 0)
        let edited = try CLI.run(["state", "--store", store, "--account", "m", "--json"]).stdout
        #expect(edited.contains(#""body":"first""#))
        #expect(!edited.contains("frist") && !edited.contains("* first"))

        #expect(try CLI.run(ingest, input: push(#""event_id":"$e3","type":"m.room.redaction","content":{"redacts":"$e1"}"#)).status == 0)
        let redacted = try CLI.run(["state", "--store", store, "--account", "m", "--json"]).stdout
        #expect(!redacted.contains(#""body":"#))
    }

    @Test("a line holding only { rejects its own lines, and the good lines after it are stored")
    func strayOpeningBrace() throws {
        let dir = TemporaryDirectory()
        let good = (1...4).map { #"{"type":"notify","account":"a","chat":"c","kind":"message","id":\#($0),"date":1}"# }
        let input = [good[0], "{", #"  "type": "notify","#, good[1], good[2], good[3]].joined(separator: "\n") + "\n"
        let result = try CLI.run(["ingest", "--store", dir.child("s"), "-"], input: input)
        #expect(result.status == 3)
        #expect(result.stderr.contains("-:2: "))
        #expect(result.stderr.contains("-:3: "))
        #expect(result.stderr.contains("ingested 6 lines: 4 events appended (seq 1…4), 2 rejected"))
    }

    @Test("a pretty-printed document after a byte-order mark is one payload, and --format herald skips the mark")
    func byteOrderMark() throws {
        let dir = TemporaryDirectory()
        let sample = try String(contentsOfFile: Shared.path("payloads/telegram/doc-sample.json"), encoding: .utf8)
        let pretty = try CLI.run(["ingest", "--store", dir.child("s"), "--format", "auto", "-"], input: "\u{FEFF}" + sample)
        #expect(pretty.status == 0, "\(pretty.stderr)")
        #expect(pretty.stderr.contains("ingested 1 line: 1 event appended"))
        let line = "\u{FEFF}" + #"{"type":"revoke","account":"a"}"# + "\n"
        let herald = try CLI.run(["ingest", "--store", dir.child("s"), "--format", "herald", "-"], input: line)
        #expect(herald.status == 0, "\(herald.stderr)")
    }
}
