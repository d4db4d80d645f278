import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore
import Testing
@testable import herald
import HeraldTestSupport

@Suite("herald commands and their error paths", .processThreads)
struct CommandTests {
    static let sample = """
        {"type":"options","account":"tg:1","groupCountMax":1}
        {"type":"notify","account":"tg:1","chat":"user:1","kind":"message","id":10,"date":100,"title":"Alice","body":"hi"}
        {"type":"notify","account":"tg:1","chat":"user:2","kind":"message","id":20,"date":101,"title":"Bob","body":"yo"}
        {"type":"read","account":"tg:1","chat":"user:2","maxId":20}

        """

    @Test("a missing store is a data problem naming the path")
    func missingStore() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["state", "--store", dir.child("nope")])
        #expect(result.status == 2)
        #expect(result.stderr.contains(dir.child("nope")))
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test("malformed JSON on line 3 is reported as FILE:3, quarantined, and the rest is appended")
    func malformedLine() throws {
        let dir = TemporaryDirectory()
        let file = dir.child("in.jsonl")
        try """
            {"type":"revoke","account":"a"}
            {"type":"revoke","account":"b"}
            {"type":"notify","account":"a","chat":"c","kind":"message","id":1
            {"type":"notify","account":"a","chat":"c","kind":"message","id":0,"date":1}
            {"type":"revoke","account":"c"}
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CLI.run(["ingest", "--store", dir.child("s"), file])
        #expect(result.status == 3)
        #expect(result.stderr.contains("\(file):3: "))
        #expect(result.stderr.contains("\(file):4: id: must be > 0"))
        #expect(result.stderr.contains("3 events appended"))
        let list = try CLI.run(["quarantine", "list", "--store", dir.child("s"), "--json"])
        #expect(Shared.lines(list.stdout).count == 2)
        let show = try CLI.run(["quarantine", "show", "2", "--store", dir.child("s")])
        #expect(show.stdout.contains(#""id":0"#))
        // A retry of a payload that is still bad keeps it and says so.
        let retry = try CLI.run(["quarantine", "retry", "2", "--store", dir.child("s")])
        #expect(retry.status == 3)
        #expect(retry.stderr.contains("still rejected"))
    }

    @Test("the summary counts lines, appended events (repeated deliveries too) and rejected lines")
    func summary() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["ingest", "--store", dir.child("s"), "-"], input: Self.sample + Self.sample + "oops\n")
        #expect(result.status == 3)
        #expect(result.stderr.contains("ingested 9 lines: 8 events appended (seq 1…8), 1 rejected"))
    }

    @Test("--all-or-nothing appends nothing when one line is bad")
    func allOrNothing() throws {
        let dir = TemporaryDirectory()
        let bad = Self.sample + "{\"type\":\"nope\",\"account\":\"a\"}\n"
        let result = try CLI.run(["ingest", "--store", dir.child("s"), "--all-or-nothing", "-"], input: bad)
        #expect(result.status == 3)
        #expect(result.stderr.contains("-:5: type: unknown event type"))
        let stats = try CLI.run(["stats", "--store", dir.child("s"), "--json"])
        #expect(try (Shared.json(stats.stdout) as! [String: Any])["records"] as? Int == 0)
    }

    @Test("usage errors exit 1: unknown format, out-of-range options, --at beyond the end")
    func usageErrors() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.sample).status == 0)
        let unknown = try CLI.run(["ingest", "--store", store, "--format", "carrier-pigeon", "-"], input: "")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown format 'carrier-pigeon'"))
        #expect(try CLI.run(["ingest", "--store", store, "--batch-size", "0", "-"], input: "").status == 1)
        let tooBig = try CLI.run(["replay", "--store", store, "--set", "groupCountMax=99"])
        #expect(tooBig.status == 1)
        #expect(tooBig.stderr.contains("0...25"))
        let beyond = try CLI.run(["state", "--store", store, "--at", "99"])
        #expect(beyond.status == 1)
        #expect(beyond.stderr.contains("beyond the end") && beyond.stderr.contains("last seq 4"))
        #expect(try CLI.run(["audit", "--store", store, "--account", "tg:1"]).status == 1)
        #expect(try CLI.run(["no-such-command"]).status == 1)
    }

    @Test("a store locked by another writer is refused with its path")
    func lockedStore() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let holder = try Store(path: store)  // this test process is the writer
        let result = try CLI.run(["ingest", "--store", store, "-"], input: Self.sample)
        #expect(result.status == 2)
        #expect(result.stderr.contains("locked") && result.stderr.contains(store))
        _ = holder
    }

    @Test("a reader in another process sees the writer's committed events")
    func readerProcess() throws {
        let dir = TemporaryDirectory()
        let store = try Store(path: dir.child("s"))
        try store.append(Event(account: "a", .note(source: "test", reason: "one")))
        let first = try CLI.run(["export", "--store", dir.child("s")])
        #expect(first.status == 0)
        #expect(Shared.lines(first.stdout).count == 1)
        try store.append(contentsOf: (0..<5).map { (Event(account: "a", .note(source: "test", reason: "\($0)")), Source.library) })
        let second = try CLI.run(["export", "--store", dir.child("s")])
        #expect(Shared.lines(second.stdout).count == 6)
        let state = try CLI.run(["state", "--store", dir.child("s"), "--json"])
        #expect(state.stdout.hasPrefix(#"{"seq":6,"#))
    }

    @Test("state --at rebuilds any point of history")
    func stateAt() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        _ = try CLI.run(["ingest", "--store", store, "-"], input: Self.sample)
        let atTwo = try CLI.run(["state", "--store", store, "--at", "2", "--json"])
        #expect(atTwo.stdout.hasPrefix(#"{"seq":2,"#))
        #expect(atTwo.stdout.contains(#""title":"Alice""#))
        let now = try CLI.run(["state", "--store", store, "--json"])
        #expect(!now.stdout.contains(#""title":"Bob""#))  // read: cleared
        #expect(now.stdout.contains(#""title":"Alice""#))  // brought back
        let human = try CLI.run(["state", "--store", store, "--account", "tg:1"])
        #expect(human.stdout.contains("group 1 messages of user:1"))
        let unknown = try CLI.run(["state", "--store", store, "--account", "tg:404"])
        #expect(unknown.status == 1)
    }

    @Test("export then import into an empty store reproduces identical state")
    func exportImport() throws {
        let dir = TemporaryDirectory()
        let original = dir.child("a"), copy = dir.child("b")
        _ = try CLI.run(["ingest", "--store", original, Shared.path("conformance/20-random-1.events.jsonl")])
        // A note has a `source` field of its own, beside the line's ingest `format`.
        let note = #"{"type":"note","account":"tg:1","source":"telegram","reason":"DC_UPDATE"}"#
        #expect(try CLI.run(["ingest", "--store", original, "-"], input: note + "\n").status == 0)
        let export = try CLI.run(["export", "--store", original])
        #expect(export.status == 0)
        let noteLine = try #require(Shared.lines(export.stdout).first { $0.contains(#""type":"note""#) })
        #expect(noteLine.contains(#""format":"herald""#) && noteLine.contains(#""source":"telegram""#))
        try export.stdout.write(toFile: dir.child("all.jsonl"), atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", "--store", copy, dir.child("all.jsonl")])
        #expect(imported.status == 0, "\(imported.stderr)")
        let a = try CLI.run(["state", "--store", original, "--json"]).stdout
        let b = try CLI.run(["state", "--store", copy, "--json"]).stdout
        #expect(a == b)
        #expect(try CLI.run(["export", "--store", copy]).stdout == export.stdout)
        // A second import into the now non-empty store is refused.
        #expect(try CLI.run(["import", "--store", copy, dir.child("all.jsonl")]).status == 1)
        // One account's export has gaps where the others' events were: the imported store
        // holds that account alone, and verifies.
        let account = try #require(try CLI.run(["state", "--store", original, "--json"]).stdout
            .firstMatch(of: /"account":"([^"]+)"/)).output.1
        let one = try CLI.run(["export", "--store", original, "--account", String(account)]).stdout
        try one.write(toFile: dir.child("one.jsonl"), atomically: true, encoding: .utf8)
        #expect(try CLI.run(["import", "--store", dir.child("c"), dir.child("one.jsonl")]).status == 0)
        let verify = try CLI.run(["verify", "--store", dir.child("c")])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(try CLI.run(["export", "--store", dir.child("c")]).stdout == one)
    }

    @Test("import rejects seqs out of order or out of range, naming the line, and imports nothing")
    func importSeqChecks() throws {
        let dir = TemporaryDirectory()
        let line = { (seq: String) in #"{"seq":\#(seq),"recorded":"@1","format":"herald","type":"revoke","account":"a"}"# }
        for (name, seqs, badLine) in [
            ("zero", ["0"], 1), ("decreasing", ["2", "1"], 2), ("repeated", ["1", "1"], 2),
            ("maximum", ["18446744073709551615"], 1), ("above 2^63-1", ["1", "9223372036854775808"], 2),
        ] {
            let file = dir.child(name + ".jsonl")
            try (seqs.map(line).joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            let result = try CLI.run(["import", "--store", dir.child(name), file])
            #expect(result.status == 3, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("\(name).jsonl:\(badLine): seq"), "\(name): \(result.stderr)")
            #expect(try CLI.run(["stats", "--store", dir.child(name), "--json"]).stdout.contains(#""records":0"#))
        }
        // The largest seq is accepted, and the store goes on working after it; the seqs the
        // import skipped are gaps on purpose, which verify accepts.
        let file = dir.child("top.jsonl")
        try (line("9223372036854775806") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try CLI.run(["import", "--store", dir.child("top"), file]).status == 0)
        #expect(try CLI.run(["ingest", "--store", dir.child("top"), "-"], input: line("1") + "\n").status == 0)
        #expect(try CLI.run(["verify", "--store", dir.child("top")]).status == 0)
        // A missing input file leaves no store behind.
        #expect(try CLI.run(["import", "--store", dir.child("none"), dir.child("missing.jsonl")]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: dir.child("none")))
        // Times beyond what milliseconds since 1970 can hold are refused, not trapped on.
        #expect(try CLI.run(["state", "--store", dir.child("top"), "--at", "@99999999999999999"]).status == 1)
    }

    @Test("recorded times keep their exact milliseconds through export and import")
    func recordedMilliseconds() throws {
        let dir = TemporaryDirectory()
        // Thousandths that a Double of seconds cannot hold exactly (…339 used to print as …338),
        // times before 1970 and whole seconds.
        let times = ["2026-11-21T04:35:12.339Z", "2026-11-21T04:35:12.001Z", "1969-12-31T23:59:59.999Z", "2026-01-01T00:00:00.000Z"]
        // The first line names its ingest format `source`, as exports did before `format`.
        let lines = times.enumerated().map { index, time in
            #"{"seq":\#(index + 1),"recorded":"\#(time)","\#(index == 0 ? "source" : "format")":"herald","type":"revoke","account":"a\#(index)"}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: dir.child("in.jsonl"), atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", "--store", dir.child("s"), dir.child("in.jsonl")])
        #expect(imported.status == 0, "\(imported.stderr)")
        let exported = Shared.lines(try CLI.run(["export", "--store", dir.child("s")]).stdout)
        #expect(exported.count == times.count)
        for (line, time) in zip(exported, times) {
            #expect(line.contains(#""recorded":"\#(time)""#), "\(line)")
        }
    }

    @Test("replay --set is a what-if that writes nothing")
    func whatIf() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        _ = try CLI.run(["ingest", "--store", store, "-"], input: Self.sample)
        let normal = try CLI.run(["replay", "--store", store, "--updates", "--json"])
        let wide = try CLI.run(["replay", "--store", store, "--updates", "--json", "--set", "groupCountMax=5"])
        #expect(normal.stdout != wide.stdout)
        // With 5 groups allowed, Bob's notification does not push Alice's group out.
        #expect(!Shared.lines(wide.stdout)[2].contains(#""removedIds":[1]"#))
        #expect(Shared.lines(normal.stdout)[2].contains(#""removedIds":[1]"#))
        #expect(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout == normal.stdout)
        let filtered = try CLI.run(["replay", "--store", store, "--from", "2", "--to", "3"])
        #expect(Shared.lines(filtered.stdout).count == 2)
    }

    /// A store in a new temporary directory (keep it alive) holding `events`, canonical JSONL
    /// ingested by the CLI.
    static func ingested(_ events: String) throws -> (directory: TemporaryDirectory, store: String) {
        let directory = TemporaryDirectory()
        let store = directory.child("s")
        let ingest = try CLI.run(["ingest", "--store", store, "-"], input: events)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        return (directory, store)
    }

    @Test("replay --set mutedUntil replaces every logged mute, and says which events it overrode")
    func whatIfMute() throws {
        let (directory, store) = try Self.ingested("""
            {"type":"chatSettings","account":"a","chat":"c","muted":true}
            {"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1000}
            {"type":"chatSettings","account":"a","chat":"d","disablePinned":true}

            """)
        defer { withExtendedLifetime(directory) {} }
        let muted = Shared.lines(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout)
        #expect(muted[1].contains(#""updates":[]"#))
        // A mute that ran out before the message's date (SEMANTICS 1.2 §4 rule 6), or none.
        for setting in ["mutedUntil=0", "mutedUntil=999", "muted=false", "mutedUntil=1970-01-01T00:10:00Z"] {
            let shown = try CLI.run(["replay", "--store", store, "--updates", "--json", "--set", setting])
            #expect(shown.status == 0)
            #expect(Shared.lines(shown.stdout)[1].contains(#""type":"updateNotificationGroup""#), "\(setting)")
        }
        let human = try CLI.run(["replay", "--store", store, "--updates", "--set", "mutedUntil=0"])
        let overridden = human.stdout.split(separator: "\n").filter { $0.contains("overridden by --set") }
        #expect(overridden.count == 1 && overridden[0].contains("chatSettings c muted=true"), "\(human.stdout)")
        #expect(human.stderr.contains("nothing is written"))
        #expect(Shared.lines(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout) == muted)
        for bad in ["mutedUntil=-5", "mutedUntil=soon", "muted=maybe", "snooze=1"] {
            let refused = try CLI.run(["replay", "--store", store, "--set", bad])
            #expect(refused.status == 1, "\(bad)")
            #expect(refused.stderr.contains(String(bad.prefix { $0 != "=" })), "\(refused.stderr)")
        }
    }

    @Test("state shows the account's clock and each chat's mute as dates")
    func stateClockAndMutes() throws {
        let (directory, store) = try Self.ingested("""
            {"type":"chatSettings","account":"a","chat":"forever","muted":true}
            {"type":"chatSettings","account":"a","chat":"later","mutedUntil":1764266400,"disablePinned":true}
            {"type":"chatSettings","account":"a","chat":"past","mutedUntil":1700000000}
            {"type":"chatSettings","account":"a","chat":"plain","disableMentions":true}
            {"type":"tick","account":"a","now":1764237600}
            {"type":"chatSettings","account":"b","chat":"c","muted":false}

            """)
        defer { withExtendedLifetime(directory) {} }
        let human = try CLI.run(["state", "--store", store]).stdout
        let lines = human.split(separator: "\n")
        func line(_ prefix: String) -> Substring? { lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) } }
        #expect(line("account a")?.contains("clock 2025-11-27T10:00:00Z") == true, "\(human)")
        #expect(line("account b")?.contains("clock not set") == true, "\(human)")
        #expect(line("forever ")?.hasSuffix("muted") == true, "\(human)")
        #expect(line("later ")?.hasSuffix("muted until 2025-11-27T18:00:00Z,no-pinned") == true, "\(human)")
        #expect(line("past ")?.hasSuffix("mute ran out 2023-11-14T22:13:20Z") == true, "\(human)")
        #expect(line("plain ")?.hasSuffix("no-mentions") == true, "\(human)")
        #expect(line("c ")?.contains("mute") == false, "\(human)")
        let json = try CLI.run(["state", "--store", store, "--json"]).stdout
        #expect(json.contains(#""clock":1764237600"#) && json.contains(#""mutedUntil":1764266400"#))
    }

    @Test("audit explains why a notification was hidden and shown again")
    func audit() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        _ = try CLI.run(["ingest", "--store", store, "-"], input: Self.sample)
        let result = try CLI.run(["audit", "--store", store, "--account", "tg:1", "--notification", "1"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("created as notification 1 in group 1"))
        #expect(result.stdout.contains("hidden: group 1 left the top groupCountMax=1 groups when group 2 (user:2) got a newer notification"))
        #expect(result.stdout.contains("shown again: group 1 came back"))
        let json = try CLI.run(["audit", "--store", store, "--account", "tg:1", "--chat", "user:2", "--object", "20", "--json"])
        let kinds = try Shared.lines(json.stdout).flatMap { line in
            ((try Shared.json(line) as! [String: Any])["effects"] as! [[String: Any]]).map { $0["kind"] as! String }
        }
        #expect(kinds.contains("created") && kinds.contains("cleared"))
    }

    @Test("audit tells a mention turned off from a pin turned off when one chatSettings does both")
    func auditSettingsClearReasonFollowsTheKind() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let events = """
            {"type":"notify","account":"a","chat":"c","kind":"mention","id":1,"date":100,"title":"m"}
            {"type":"notify","account":"a","chat":"c","kind":"pinned","id":2,"date":101,"title":"p"}
            {"type":"chatSettings","account":"a","chat":"c","disableMentions":true,"disablePinned":true}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let mention = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1"])
        #expect(mention.stdout.contains("notification 1 cleared: mention notifications were turned off for the chat"), "\(mention.stdout)")
        let pinned = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "2"])
        #expect(pinned.stdout.contains("notification 2 cleared: pinned-message notifications were turned off for the chat"), "\(pinned.stdout)")
    }

    @Test("audit of a dismissed call says it left its group's total, which counts only active calls")
    func auditDismissedCallLeavesTheTotal() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let events = """
            {"type":"notify","account":"a","chat":"c","kind":"call","id":9,"date":100,"title":"call"}
            {"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":101,"title":"hi"}
            {"type":"dismiss","account":"a","notificationId":1}
            {"type":"dismiss","account":"a","notificationId":2}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let updates = try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout
        #expect(Shared.lines(updates)[2].contains(#""totalCount":0"#), "\(updates)")
        let call = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1"])
        #expect(call.stdout.contains("notification 1 dismissed by the user; it no longer counts in its group's total"), "\(call.stdout)")
        #expect(Shared.lines(updates)[3].contains(#""totalCount":1"#), "\(updates)")
        let message = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "2"])
        #expect(message.stdout.contains("notification 2 dismissed by the user; it still counts in its group's total while unread"), "\(message.stdout)")
    }

    @Test("audit says a notification created out of view was not shown, and later shown for the first time, not again")
    func auditNotificationCreatedOutOfView() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // Group 2's only notification is older than group 1's: with groupCountMax=1 it is
        // created hidden, and appears only when group 1 leaves.
        let events = """
            {"type":"options","account":"a","groupCountMax":1}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":1,"date":200}
            {"type":"notify","account":"a","chat":"c2","kind":"message","id":1,"date":100}
            {"type":"read","account":"a","chat":"c1","maxId":1}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let updates = Shared.lines(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout)
        #expect(updates[2].contains(#""updates":[]"#), "\(updates)")
        let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "2", "--json"])
        let effects = try Shared.lines(audit.stdout).map { line in
            ((try Shared.json(line) as! [String: Any])["effects"] as! [[String: Any]]).map { $0["kind"] as! String }
        }
        #expect(effects == [["created", "notShown"], ["shown"]], "\(audit.stdout)")
        let text = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "2"]).stdout
        #expect(text.contains("notification 2 not shown: group 2 is not among the top groupCountMax=1 groups"), "\(text)")
        #expect(text.contains("notification 2 shown for the first time: group 2 came into the top groupCountMax=1 when group 1 (c1) left the view"), "\(text)")
    }

    @Test("audit of notifications an options event brings back names the options, not newer notifications leaving")
    func auditShownAgainByOptions() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let events = """
            {"type":"options","account":"a","groupCountMax":1,"groupSizeMax":1}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":1,"date":100}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":2,"date":101}
            {"type":"notify","account":"a","chat":"c2","kind":"message","id":1,"date":102}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":3,"date":103}
            {"type":"options","account":"a","groupSizeMax":3}
            {"type":"options","account":"a","groupCountMax":2}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let updates = Shared.lines(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout)
        #expect(updates[5].contains(#""added":[{"id":1"#) && updates[5].contains(#""removedIds":[]"#), "\(updates)")
        let size = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1"]).stdout
        #expect(!size.contains("newer notifications left"), "\(size)")
        #expect(size.contains("notification 1 shown again: group 1 now shows its groupSizeMax=3 newest active notifications after the view options changed"), "\(size)")
        let count = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "3"]).stdout
        #expect(count.contains("notification 3 shown again: group 2 came back into the top groupCountMax=2 after the view options changed"), "\(count)")
    }

    @Test("audit of a group that comes back because it got a newer notification gives that as the cause")
    func auditGroupBackByNewerNotification() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let events = """
            {"type":"options","account":"a","groupCountMax":1,"groupSizeMax":2}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":1,"date":100}
            {"type":"notify","account":"a","chat":"c2","kind":"message","id":1,"date":101}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":2,"date":102}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1"]).stdout
        #expect(audit.contains("notification 1 shown again: group 1 came back into the top groupCountMax=1 when it got newer notification 3"), "\(audit)")
        let other = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "2"]).stdout
        #expect(other.contains("notification 2 hidden: group 2 left the top groupCountMax=1 groups when group 1 (c1) got a newer notification"), "\(other)")
    }

    @Test("audit of a group or chat shows a revoke removing its notifications from view, as the notification's own audit does")
    func auditRevokeRemovesFromViewForEveryTarget() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let events = """
            {"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":100}
            {"type":"revoke","account":"a"}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let updates = Shared.lines(try CLI.run(["replay", "--store", store, "--updates", "--json"]).stdout)
        #expect(updates[1].contains(#""removedIds":[1]"#), "\(updates)")
        for target in [["--notification", "1"], ["--group", "1"], ["--chat", "c"], ["--chat", "c", "--object", "1"]] {
            let audit = try CLI.run(["audit", "--store", store, "--account", "a"] + target).stdout
            #expect(audit.contains("notification 1 wiped: the session was revoked"), "\(target): \(audit)")
            #expect(audit.contains("notification 1 removed from view"), "\(target): \(audit)")
        }
    }

    @Test(
        "audit of a revoke names the dismissed notifications it wipes besides the active ones, not those cleared before",
        arguments: [false, true])
    func auditRevokeWipesDismissedNotifications(compactedBeforeRevoke: Bool) throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // Before the revoke, the account's state holds notification 1 (dismissed) and 2
        // (active) in group 1; notification 3 was cleared, so the state no longer has it.
        let events = """
            {"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":100}
            {"type":"notify","account":"a","chat":"c","kind":"message","id":2,"date":101}
            {"type":"notify","account":"a","chat":"c","kind":"message","id":3,"date":102}
            {"type":"dismiss","account":"a","notificationId":1}
            {"type":"delete","account":"a","chat":"c","ids":[3]}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        if compactedBeforeRevoke {
            // The audit then learns the dismissed notification from the base snapshot.
            #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
            #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        }
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: #"{"type":"revoke","account":"a"}"# + "\n").status == 0)
        let targets: [([String], wiped: [Int])] = [
            (["--group", "1"], [1, 2]), (["--chat", "c"], [1, 2]), (["--chat", "c", "--object", "1"], [1]), (["--notification", "1"], [1]),
        ]
        for (target, wiped) in targets {
            let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--json"] + target)
            #expect(audit.status == 0, "\(audit.stderr)")
            let revoke = try #require(Shared.lines(audit.stdout).last)
            #expect(revoke.hasPrefix(#"{"seq":6,"#), "\(target): \(audit.stdout)")
            let effects = (try Shared.json(revoke) as! [String: Any])["effects"] as! [[String: Any]]
            let ids = effects.filter { $0["kind"] as? String == "wiped" }.map { $0["notificationId"] as? Int }
            #expect(ids == wiped, "\(target): \(revoke)")
            #expect(revoke.contains("notification 1 wiped: the session was revoked and the account reset; it had been dismissed"), "\(target): \(revoke)")
        }
        let text = try CLI.run(["audit", "--store", store, "--account", "a", "--chat", "c"]).stdout
        #expect(text.contains("notification 2 wiped: the session was revoked and the account reset\n"), "\(text)")
        #expect(!text.contains("notification 3 wiped"), "\(text)")
    }

    @Test("audit of an account no event names is a usage error listing the accounts, as state's is")
    func auditUnknownAccount() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.sample).status == 0)
        let typo = try CLI.run(["audit", "--store", store, "--account", "tg:2", "--group", "1"])
        #expect(typo.status == 1, "\(typo.stdout)")
        #expect(typo.stderr.contains("no account 'tg:2'") && typo.stderr.contains("accounts: tg:1"), "\(typo.stderr)")
        #expect(try CLI.run(["state", "--store", store, "--account", "tg:2"]).status == 1)
        // export and replay likewise, where an empty answer would read as "no events".
        for command in ["export", "replay"] {
            let unknown = try CLI.run([command, "--store", store, "--account", "tg:2"])
            #expect(unknown.status == 1 && unknown.stdout.isEmpty, "\(command): \(unknown.stdout)")
            #expect(unknown.stderr.contains("no account 'tg:2'") && unknown.stderr.contains("accounts: tg:1"), "\(command): \(unknown.stderr)")
        }
        // A known account with no events in the range is an empty answer, exit 0.
        let last = try CLI.run(["export", "--store", store]).stdout.split(separator: "\n").count
        let beyond = try CLI.run(["export", "--store", store, "--account", "tg:1", "--from", "\(last + 1)"])
        #expect(beyond.status == 0 && beyond.stdout.isEmpty, "\(beyond.stderr)")
        let own = try CLI.run(["export", "--store", store, "--account", "tg:1"])
        #expect(own.status == 0 && own.stdout.split(separator: "\n").count == last, "\(own.stderr)")
        // A group id the known account never had is a usage error too, naming the ids it had.
        let untouched = try CLI.run(["audit", "--store", store, "--account", "tg:1", "--group", "9"])
        #expect(untouched.status == 1 && untouched.stderr.contains("never had group 9 (nearest it had: 1"), "\(untouched.stderr)")
        #expect(try CLI.run(["purge", "--store", store, "--account", "tg:1", "--yes"]).status == 0)
        #expect(try CLI.run(["audit", "--store", store, "--account", "tg:1", "--group", "1"]).status == 1)
    }

    @Test("audit of a chat no event of the account names is a usage error listing its chats")
    func auditUnknownChat() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.sample).status == 0)
        let state = try #require(try Shared.json(CLI.run(["state", "--store", store, "--account", "tg:1", "--json"]).stdout) as? [String: Any])
        let account = try #require((state["accounts"] as? [[String: Any]])?.first)
        let names = (account["chats"] as? [[String: Any]] ?? []).compactMap { $0["chat"] as? String }
        #expect(!names.isEmpty)
        let typo = try CLI.run(["audit", "--store", store, "--account", "tg:1", "--chat", "chat:nope"])
        #expect(typo.status == 1, "\(typo.stdout)")
        #expect(typo.stderr.contains("names chat 'chat:nope'") && typo.stderr.contains("its chats: \(names.joined(separator: ", "))"), "\(typo.stderr)")
        let known = try CLI.run(["audit", "--store", store, "--account", "tg:1", "--chat", names[0], "--object", "999999"])
        #expect(known.status == 0 && known.stdout.contains("never received: no event named object #999999"), "\(known.stdout)")
    }

    @Test("audit of a group pushed out because its newest notification left does not say the other group got a newer one")
    func auditGroupLeftWhenItsNewestLeft() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // Group 1 leads with notification 3 (date 300); dismissing it leaves its newest
        // active at date 100, behind group 2's 200, which got nothing.
        let events = """
            {"type":"options","account":"a","groupCountMax":1}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":1,"date":100}
            {"type":"notify","account":"a","chat":"c2","kind":"message","id":1,"date":200}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":2,"date":300}
            {"type":"dismiss","account":"a","notificationId":3}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: events).status == 0)
        let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1", "--json"]).stdout
        let dismissed = try #require(Shared.lines(audit).last)
        #expect(dismissed.hasPrefix(#"{"seq":5,"#) && !dismissed.contains("got a newer notification"), "\(audit)")
        #expect(dismissed.contains("notification 1 hidden: group 1 left the top groupCountMax=1 groups when group 2 (c2) moved ahead of it"), "\(audit)")
    }

    @Test("ingest of real payload files in every format, with auto detection")
    func realPayloads() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        for (file, account) in [
            ("telegram/doc-sample.json", "tg:14124122"), ("zulip/e2ee-channel-message.json", "zulip:http://zulip.testserver/|10"),
            ("apns/thread-message.json", "apns:phone"), ("fcm/data-message.json", "fcm:phone"), ("matrix/sygnal-notification.json", "matrix:@me:example.org"),
        ] {
            let result = try CLI.run(["ingest", "--store", store, "--format", "auto", "--account", account, Shared.path("payloads/" + file)])
            #expect(result.status == 0, "\(file): \(result.stderr)")
        }
        let stats = try Shared.json(try CLI.run(["stats", "--store", store, "--json"]).stdout) as! [String: Any]
        let sources = stats["byFormat"] as! [String: Int]
        #expect(Set(sources.keys) == ["telegram", "zulip", "apns", "fcm", "matrix"])
        // A payload naming another account than --account is rejected.
        let wrong = try CLI.run(["ingest", "--store", store, "--format", "telegram", "--account", "tg:1", Shared.path("payloads/telegram/doc-sample.json")])
        #expect(wrong.status == 3)
        #expect(wrong.stderr.contains("not \"tg:1\""))
    }

    @Test("ingest opens Zulip E2EE pushes with --zulip-push-key; without it the line is rejected and nothing is lost")
    func zulipEncrypted() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // The demo's sealed push (PyNaCl's SecretBox; see HeraldIngestTests/ZulipE2EETests.pyNaClVector).
        let sealed = try #require(DemoPayloads.samples.first { $0.payload.contains("encrypted_data") })
        let line = sealed.payload + "\n"
        let key = DemoPayloads.zulipPushKey
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.sample).status == 0)
        let before = try CLI.run(["state", "--store", store, "--json"]).stdout

        let withoutKey = try CLI.run(["ingest", "--store", store, "--format", "auto", "-"], input: line)
        #expect(withoutKey.status == 3)
        #expect(withoutKey.stderr.contains("push_key_id"))
        #expect(try CLI.run(["state", "--store", store, "--json"]).stdout == before)
        #expect(try CLI.run(["ingest", "--store", store, "--zulip-push-key", "2408:bm90IGEga2V5", "-"], input: line).status != 0)

        let opened = try CLI.run(["ingest", "--store", store, "--format", "auto", "--zulip-push-key", key, "-"], input: line)
        #expect(opened.status == 0, "\(opened.stderr)")
        let state = try CLI.run(["state", "--store", store, "--json"]).stdout
        #expect(state.contains("zulip:http://zulip.testserver/|10"))
        #expect(state.contains("dm:6,10,12,15"))
        #expect(state.contains("test content"))
    }

    @Test("a quarantined payload keeps its --account, and a retry with the key it lacked appends it")
    func quarantineRetryWithAccountAndKeys() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let sealed = try #require(DemoPayloads.samples.first { $0.format == "telegram" && $0.payload.contains(#""p":"#) })
        let account = try #require(sealed.account)
        let rejected = try CLI.run(["ingest", "--store", store, "--format", "telegram", "--account", account, "-"], input: sealed.payload + "\n")
        #expect(rejected.status == 3)
        let listed = try Shared.json(try CLI.run(["quarantine", "list", "--store", store, "--json"]).stdout) as! [String: Any]
        #expect(listed["account"] as? String == account)
        let id = try #require(listed["id"] as? Int)
        #expect(try CLI.run(["quarantine", "retry", "--store", store, "\(id)"]).status == 3)
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", account, DemoPayloads.telegramKey]).status == 0)
        let retried = try CLI.run(["quarantine", "retry", "--store", store, "\(id)"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(try CLI.run(["state", "--store", store, "--account", account, "--json"]).status == 0)
        #expect(try CLI.run(["quarantine", "list", "--store", store, "--json"]).stdout.isEmpty)

        // A Zulip E2EE push with no key given: the retry takes the key, and records the
        // format the payload was read as, not `auto`.
        let zulip = try #require(DemoPayloads.samples.first { $0.payload.contains("encrypted_data") })
        #expect(try CLI.run(["ingest", "--store", store, "--format", "auto", "-"], input: zulip.payload + "\n").status == 3)
        let entry = try Shared.json(try CLI.run(["quarantine", "list", "--store", store, "--json"]).stdout) as! [String: Any]
        let zulipId = try #require(entry["id"] as? Int)
        let opened = try CLI.run(["quarantine", "retry", "--store", store, "\(zulipId)", "--zulip-push-key", DemoPayloads.zulipPushKey])
        #expect(opened.status == 0, "\(opened.stderr)")
        let last = try #require(Shared.lines(try CLI.run(["export", "--store", store]).stdout).last)
        #expect(last.contains(#""format":"zulip""#), "\(last)")
    }

    @Test("payloads rejected before a kill are in the quarantine: it is written batch by batch")
    func quarantineSurvivesKill() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let (process, input, output) = try CLI.start(["ingest", "--store", store, "--batch-size", "1", "--print-seqs", "-"])
        let good = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1}"#
        try input.write(contentsOf: Data(("not json\n" + good + "\n").utf8))
        // Wait for the good line's acknowledgement, then kill the ingest mid-stream.
        var acknowledged = ""
        CLI.read(output, into: &acknowledged, until: "ack 1")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(acknowledged.contains("ack 1"))
        let entries = Shared.lines(try CLI.run(["quarantine", "list", "--store", store, "--json"]).stdout)
        #expect(entries.count == 1 && entries[0].contains(#""line":1"#), "\(entries)")
    }

    @Test("ingest of a live stream commits and acknowledges each line when it waits for the next, even after a stray {")
    func liveStreamIsAcknowledgedAsItComes() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // The default batch size: nothing but waiting for input may cut a batch here.
        let (process, input, output) = try CLI.start(["ingest", "--store", store, "--print-seqs", "-"])
        // Should an acknowledgement never come, end the wait instead of hanging the suite.
        let watchdog = DispatchWorkItem { [pid = process.processIdentifier] in kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        defer { watchdog.cancel() }
        var acknowledged = ""
        func event(_ id: Int) -> String {
            #"{"type":"notify","account":"a","chat":"c","kind":"message","id":\#(id),"date":1}"# + "\n"
        }
        try input.write(contentsOf: Data(event(1).utf8))
        CLI.read(output, into: &acknowledged, until: "ack 1\n")
        #expect(acknowledged == "ack 1\n")
        // A stray `{`, then a one-line payload: the payload is not held for a document.
        try input.write(contentsOf: Data(("{\n" + event(2)).utf8))
        CLI.read(output, into: &acknowledged, until: "ack 2\n")
        #expect(acknowledged == "ack 1\nack 2\n")
        try input.close()
        acknowledged += String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 3, "the stray { is a rejected line")
        #expect(acknowledged == "ack 1\nack 2\n")
    }

    @Test("keys remove takes negative key ids as keys list prints them")
    func removeNegativeKeyId() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", DemoPayloads.telegramKey]).status == 0)
        let id = try TelegramKey(base64url: DemoPayloads.telegramKey).keyId
        let missing = try CLI.run(["keys", "remove", "--store", store, "\(id == -5 ? -6 : -5)"])
        #expect(missing.status == 1 && missing.stderr.contains("no key -"), "\(missing.stderr)")
        #expect(try CLI.run(["keys", "remove", "--store", store, "12x"]).status == 1)
        let removed = try CLI.run(["keys", "remove", "--store", store, "\(id)"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!(try CLI.run(["keys", "list", "--store", store]).stdout.contains("\(id)")))
    }

    @Test("keys add takes a key whose base64url starts with '-' (one in 64 keys), with or without --")
    func addKeyStartingWithDash() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // First bytes f8 7e and fb 13 encode as "-H4h…" (an `h` that once read as -h, help, exit 0
        // and nothing added) and "-xMT…" (once an unknown option).
        let keys = [[0xf8, 0x7e] + [UInt8](repeating: 0x21, count: 254), [0xfb] + [UInt8](repeating: 0x13, count: 255)]
            .map { Data($0).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") }
        #expect(keys.allSatisfy { $0.hasPrefix("-") }, "\(keys)")
        let first = try CLI.run(["keys", "add", "--store", store, keys[0]])
        #expect(first.status == 0 && first.stderr.contains("added Telegram key"), "\(first.stdout)\(first.stderr)")
        let second = try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", "--", keys[1]])
        #expect(second.status == 0 && second.stderr.contains("added Telegram key"), "\(second.stdout)\(second.stderr)")
        let listed = try CLI.run(["keys", "list", "--store", store]).stdout
        for key in keys {
            #expect(listed.contains("\(try TelegramKey(base64url: key).keyId)"), "\(listed)")
        }
        #expect(try CLI.run(["keys", "add", "--store", store]).status == 1)
        #expect(try CLI.run(["keys", "add", "--store", store, keys[0], keys[1]]).status == 1)
    }

    @Test("keys add and keys remove show the one argument they take, not a list")
    func keysUsageLines() throws {
        for (command, usage) in [
            ("add", "herald keys add [--store <DIR>] [--account <account>] [--rebind] (<BASE64URL> | --key-file <FILE>)"),
            ("remove", "herald keys remove [--store <DIR>] <ID>"),
        ] {
            let help = try CLI.run(["keys", command, "--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: \(usage)\n"), "\(help.stdout)")
            #expect(!help.stdout.contains("..."), "\(help.stdout)")
        }
    }

    @Test("--account does not name the account of a herald line: the line must, and help says so")
    func heraldLineNeedsItsAccount() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let input = #"{"type":"read","chat":"c","maxId":3}"# + "\n" + #"{"type":"read","account":"tg:1","chat":"c","maxId":3}"# + "\n"
        let result = try CLI.run(["ingest", "--store", store, "--account", "tg:1", "-"], input: input)
        #expect(result.status == 3 && result.stderr.contains("-:1: account: missing"), "\(result.stderr)")
        #expect(result.stderr.contains("1 event appended"), "\(result.stderr)")
        let help = try CLI.run(["ingest", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("(a herald line must name its own)"), "\(help)")
    }

    @Test("the demo runs end to end and loses nothing in its crash drill")
    func demo() throws {
        let result = try CLI.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("every acknowledged event is there (0 lost)"))
        #expect(result.stdout.contains("hidden: group 1 left the top groupCountMax=2"))
    }

    @Test("help documents the exit codes")
    func help() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("3  some input was rejected"))
    }

    @Test("snapshot --help gives the store's real automatic snapshot interval and how many it keeps")
    func snapshotHelpDefaults() throws {
        let result = try CLI.run(["snapshot", "--help"])
        #expect(result.status == 0)
        let options = Store.Options()
        let interval = String(options.snapshotInterval)
        var grouped = String(interval.prefix(interval.count % 3))
        for (index, digit) in interval.dropFirst(interval.count % 3).enumerated() {
            if index % 3 == 0 && !grouped.isEmpty { grouped += "," }
            grouped.append(digit)
        }
        let words = [1: "one", 2: "two", 3: "three", 4: "four", 5: "five"]
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("every \(grouped) events"), "\(text)")
        #expect(text.contains("keeps the newest \(words[options.snapshotsToKeep] ?? "?")"), "\(text)")
    }
}
