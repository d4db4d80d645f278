import Foundation
import HeraldEvents
import HeraldStore
import HeraldTestSupport
import Testing

@testable import herald

/// `herald index` and the reading commands that use the audit index (issue #23 §8).
@Suite("herald index", .processThreads)
struct IndexCommandTests {
    static func notify(_ chat: String, _ id: Int) -> String {
        #"{"type":"notify","account":"a","chat":"\#(chat)","kind":"message","id":\#(id),"date":\#(100 + id),"title":"t\#(id)"}"# + "\n"
    }

    static func read(_ chat: String, _ maxId: Int) -> String {
        #"{"type":"read","account":"a","chat":"\#(chat)","maxId":\#(maxId)}"# + "\n"
    }

    @Test("index builds on demand; audits and state --at answer from it with the replay's lines, and say what they leave out")
    func indexAnswers() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        var input = ""
        for id in 1...40 { input += Self.notify(id % 3 == 0 ? "d" : "c", id) }
        input += Self.read("c", 5) + Self.read("c", 5) + Self.notify("c", 41) + Self.read("d", 60)
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: input).status == 0)
        // A small store gets no index by itself: its audits replay, and say the same as with one.
        #expect(try CLI.run(["audit", "--store", store, "--account", "a", "--chat", "c", "--object", "1"]).stdout
            .contains("(events that named it without changing it are not shown; --all lists them)"))
        let built = try CLI.run(["index", "--store", store, "--json"])
        #expect(built.status == 0, "\(built.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(built.stdout.utf8)) as? [String: Any])
        #expect(report["through"] as? Int == 44 && (report["buckets"] as? Int ?? 0) > 5 && (report["bytes"] as? Int ?? 0) > 0, "\(built.stdout)")
        let audit = { (arguments: [String]) in try CLI.run(["audit", "--store", store, "--account", "a"] + arguments) }
        for target in [["--chat", "c", "--object", "1"], ["--chat", "c"], ["--notification", "3"], ["--group", "2"], ["--chat", "d", "--object", "39"]] {
            let fast = try audit(target + ["--json"])
            let slow = try audit(target + ["--json", "--no-index"])
            #expect(fast.status == 0 && fast.stdout == slow.stdout && !fast.stdout.isEmpty, "\(target): \(fast.stdout) vs \(slow.stdout)")
        }
        let text = try audit(["--chat", "c", "--object", "1"])
        #expect(text.stdout.contains("seq 1 ") && text.stdout.contains("cleared: the chat was read up to #5"), "\(text.stdout)")
        #expect(text.stdout.contains("(events that named it without changing it are not shown; --all lists them)"), "\(text.stdout)")
        #expect(try audit(["--chat", "c", "--object", "1", "--no-index"]).stdout.contains("1 event that named it without changing it not shown"))
        #expect(try audit(["--chat", "c", "--object", "1", "--all"]).stdout.contains("no effect on the target"))
        // Unknown targets still get the replay's answers.
        #expect(try audit(["--notification", "999"]).status == 1)
        #expect(try audit(["--chat", "c", "--object", "777"]).stdout.contains("never received"))
        for seq in ["3", "30", "43"] {
            let fast = try CLI.run(["state", "--store", store, "--account", "a", "--at", seq, "--json"])
            let slow = try CLI.run(["state", "--store", store, "--account", "a", "--at", seq, "--json", "--no-snapshots"])
            #expect(fast.status == 0 && fast.stdout == slow.stdout, "state --at \(seq)")
        }
        // Ingest keeps an index that exists up to date; verify checks it against the history.
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("c", 50)).status == 0)
        let caughtUp = try CLI.run(["index", "--store", store, "--json"]).stdout
        #expect(caughtUp.contains(#""through":45"#), "\(caughtUp)")
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    @Test("stats shows the audit index: none, current, or how far it is behind the log")
    func statsShowsIndex() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("c", 1) + Self.notify("c", 2)).status == 0)
        let none = try CLI.run(["stats", "--store", store, "--json"])
        #expect(none.status == 0 && !none.stdout.contains("auditIndex"), "\(none.stdout)")
        #expect(try CLI.run(["stats", "--store", store]).stdout.contains("audit index  none (`herald index` builds one)"))
        #expect(try CLI.run(["index", "--store", store]).status == 0)
        let current = try CLI.run(["stats", "--store", store, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(current.stdout.utf8)) as? [String: Any])
        let index = try #require(object["auditIndex"] as? [String: Any], "\(current.stdout)")
        #expect(index["through"] as? Int == 2 && (index["buckets"] as? Int ?? 0) > 0 && (index["seqChunks"] as? Int ?? 0) > 0 && (index["bytes"] as? Int ?? 0) > 0)
        #expect(try CLI.run(["stats", "--store", store]).stdout.contains("audit index  through seq 2 (current)"))
        // The library's append does not keep the index up (ingest, import and serve do).
        do {
            let library = try Store(path: store)
            _ = try library.append(Event(account: "a", .read(chat: "c", maxId: 1)))
        }
        let behind = try CLI.run(["stats", "--store", store])
        #expect(behind.stdout.contains("audit index  through seq 2 (1 seq behind the log; reading commands replay past it)"), "\(behind.stdout)")
    }

    @Test("a store whose history was discarded keeps no index, and says why")
    func discardedHistory() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("c", 1) + Self.notify("c", 2)).status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        let result = try CLI.run(["index", "--store", store])
        #expect(result.status == 1 && result.stderr.contains("keeps no audit index"), "\(result.stderr)")
    }
}
