import Foundation
import Testing
import HeraldTestSupport

@Suite("herald snapshot, compact, purge and verify", .processThreads)
struct MaintenanceCommandTests {
    /// A store with two accounts and enough events to compact.
    func makeStore(_ dir: TemporaryDirectory) throws -> String {
        let store = dir.child("s")
        var lines: [String] = []
        for i in 1...400 {
            let account = i % 2 == 0 ? "tg:keep" : "tg:secret-person"
            lines.append(#"{"type":"notify","account":"\#(account)","chat":"chat:\#(i % 9)","kind":"message","id":\#(i),"date":\#(1_000 + i),"title":"MARKER-\#(account)","body":"b\#(i)"}"#)
            if i % 10 == 0 { lines.append(#"{"type":"read","account":"\#(account)","chat":"chat:\#(i % 9)","maxId":\#(i)}"#) }
        }
        let result = try CLI.run(["ingest", "--store", store, "-"], input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    @Test("snapshot, then compact with an archive: state, history and verify are unchanged")
    func snapshotAndCompact() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let before = try CLI.run(["state", "--store", store, "--json"]).stdout
        let exportBefore = try CLI.run(["export", "--store", store]).stdout
        let snapshot = try CLI.run(["snapshot", "--store", store])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        let compact = try CLI.run(["compact", "--store", store, "--archive"])
        #expect(compact.status == 0, "\(compact.stderr)")
        #expect(try CLI.run(["state", "--store", store, "--json"]).stdout == before)
        #expect(try CLI.run(["state", "--store", store, "--json", "--no-snapshots"]).stdout == before)
        #expect(try CLI.run(["export", "--store", store]).stdout == exportBefore)
        let audit = try CLI.run(["audit", "--store", store, "--account", "tg:keep", "--notification", "1"])
        #expect(audit.stdout.contains("created as notification 1"))
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let stats = try Shared.json(try CLI.run(["stats", "--store", store, "--json"]).stdout) as! [String: Any]
        #expect((stats["snapshotSeqs"] as! [Int]).isEmpty == false)
    }

    @Test("history stays reachable up to the last seq given out after compaction and purge")
    func historyBoundsAfterCompactionAndPurge() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let stats = { try Shared.json(try CLI.run(["stats", "--store", store, "--json"]).stdout) as! [String: Any] }
        let last = try #require(try stats()["lastSeq"] as? Int)
        let early = try CLI.run(["state", "--store", store, "--at", "5", "--json"]).stdout
        let end = try CLI.run(["state", "--store", store, "--at", "\(last)", "--json"]).stdout
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--archive"]).status == 0)
        // The log is empty now; every seq lives in the archive or the snapshot.
        #expect(try stats()["records"] as? Int == 0)
        #expect(try stats()["lastSeq"] as? Int == last)
        #expect(try CLI.run(["state", "--store", store, "--at", "5", "--json"]).stdout == early)
        #expect(try CLI.run(["state", "--store", store, "--at", "\(last)", "--json"]).stdout == end)
        #expect(try CLI.run(["replay", "--store", store, "--to", "3", "--json"]).stdout.split(separator: "\n").count == 3)
        #expect(try CLI.run(["state", "--store", store, "--at", "\(last + 1)"]).status == 1)
        // The last records were tg:keep's; purging it leaves their seqs given out.
        let append = #"{"type":"notify","account":"tg:keep","chat":"c","kind":"message","id":9999,"date":9999}"#
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: append + "\n").status == 0)
        #expect(try CLI.run(["purge", "--store", store, "--account", "tg:keep", "--yes"]).status == 0)
        #expect(try stats()["lastSeq"] as? Int == last + 1)
        let afterPurge = try CLI.run(["state", "--store", store, "--at", "\(last + 1)", "--json"])
        #expect(afterPurge.status == 0, "\(afterPurge.stderr)")
    }

    @Test("exports of a retention run given relative paths are found by a later command run from elsewhere")
    func retentionExportsResolveFromTheStore() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let elsewhere = dir.child("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let notify = { (id: Int) in #"{"type":"notify","account":"tg:keep","chat":"c","kind":"message","id":\#(id),"date":\#(id)}"# }
        // Two runs from `dir`, given paths relative to it: one exports inside the store, one beside it.
        for (round, exports) in [(1, "s/exports"), (2, "outside")] {
            if round == 2 { #expect(try CLI.run(["ingest", "--store", store, "-"], input: notify(5_000) + "\n").status == 0) }
            #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
            #expect(try CLI.run(["compact", "--store", store, "--archive"]).status == 0)
            let expire = try CLI.run(
                ["serve", "expire-archive", "--store", "s", "--max-bytes", "0", "--export-directory", exports, "--yes"],
                currentDirectory: dir.path)
            #expect(expire.status == 0, "\(expire.stderr)")
        }
        // From another directory, the store given by its absolute path names both files where they are.
        let state = try CLI.run(["state", "--store", store, "--at", "1"], currentDirectory: elsewhere)
        #expect(state.status != 0)
        let named = state.stderr.split(whereSeparator: { " ,;()\n".contains($0) }).filter { $0.hasSuffix(".jsonl.gz") }
        #expect(named.count == 2, "\(state.stderr)")
        for file in named {
            #expect(file.hasPrefix("/") && FileManager.default.fileExists(atPath: String(file)), "\(file)")
        }
        #expect(named.first?.hasPrefix(store + "/exports/") == true && named.last?.hasPrefix(dir.child("outside") + "/") == true)
    }

    @Test("audit, export and replay after compaction without an archive start after the base and say so")
    func auditAfterCompactionWithoutArchive() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let notify = { (id: Int) in #"{"type":"notify","account":"a","chat":"c","kind":"message","id":\#(id),"date":\#(100 + id),"title":"t\#(id)"}"# + "\n" }
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: notify(1)).status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        // `--at` naming no snapshot is a usage error that lists the ones there are.
        let missing = try CLI.run(["compact", "--store", store, "--at", "5"])
        #expect(missing.status == 1 && missing.stderr.contains("--at 5: no snapshot at that seq") && missing.stderr.contains("it has 1"), "\(missing.stderr)")
        #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: notify(2)).status == 0)
        let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--chat", "c", "--object", "2"])
        #expect(audit.status == 0, "\(audit.stderr)")
        // Message 1 took notification 1 and created group 1 before the base.
        #expect(audit.stdout.contains("created as notification 2"), "\(audit.stdout)")
        #expect(!audit.stdout.contains("group 1 created"), "\(audit.stdout)")
        #expect(audit.stderr.contains("compacted without an archive"))
        let first = try CLI.run(["audit", "--store", store, "--account", "a", "--notification", "1", "--json"])
        #expect(!first.stdout.contains(#""id":2"#), "message 2 is not notification 1: \(first.stdout)")
        // Export says what it cannot include, unless the range asked for starts after the base.
        let export = try CLI.run(["export", "--store", store])
        #expect(export.status == 0 && export.stdout.contains(#""id":2"#), "\(export.stderr)")
        #expect(export.stderr.contains("history up to seq 1 was compacted without an archive"), "\(export.stderr)")
        #expect(try CLI.run(["export", "--store", store, "--from", "2"]).stderr.isEmpty)
        let replay = try CLI.run(["replay", "--store", store, "--updates", "--json"])
        #expect(replay.status == 0 && replay.stdout.split(separator: "\n").count == 1, "\(replay.stdout)")
        #expect(replay.stderr.contains("the replay starts from the snapshot at seq 1"), "\(replay.stderr)")
        #expect(try CLI.run(["replay", "--store", store, "--from", "2"]).stderr.isEmpty)
    }

    @Test("audit after compaction without an archive explains what later events did to the snapshot's notifications")
    func auditAfterCompactionKnowsTheSnapshotState() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let event = { (json: String) in #"{"account":"a",\#(json)}"# }
        let before = [
            event(#""type":"options","groupCountMax":2,"groupSizeMax":2"#),
            event(#""type":"notify","chat":"c1","kind":"message","id":1,"date":100"#),
            event(#""type":"notify","chat":"c1","kind":"message","id":2,"date":101"#),
            event(#""type":"notify","chat":"c2","kind":"message","id":1,"date":102"#),
            event(#""type":"notify","chat":"c3","kind":"message","id":1,"date":103"#),
        ]
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: before.joined(separator: "\n") + "\n").status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        // Group 1 (c1) is hidden at the snapshot: c2 and c3 hold the top groupCountMax=2.
        let after = [event(#""type":"delete","chat":"c3","ids":[1]"#), event(#""type":"read","chat":"c1","maxId":2"#)]
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: after.joined(separator: "\n") + "\n").status == 0)
        let group = try CLI.run(["audit", "--store", store, "--account", "a", "--group", "1"])
        #expect(group.status == 0, "\(group.stderr)")
        #expect(group.stdout.contains("notification 1 came into view: group 1 came into the top groupCountMax=2 when group 3 (c3) left the view"), "\(group.stdout)")
        #expect(group.stdout.contains("notification 1 cleared: the chat was read up to #2"), "\(group.stdout)")
        #expect(group.stdout.contains("notification 2 cleared: the chat was read up to #2"), "\(group.stdout)")
        let chat = try CLI.run(["audit", "--store", store, "--account", "a", "--chat", "c1"])
        #expect(!chat.stdout.contains("no effect"), "the read cleared c1's notifications: \(chat.stdout)")
        #expect(chat.stdout.contains("notification 2 cleared"), "\(chat.stdout)")
    }

    @Test("audit after compaction without an archive does not call a notification out of view at the base shown again")
    func auditAfterCompactionShownAfterTheBase() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        // Account a shows one group (groupCountMax=1): at the base, group 2 (c2) is in view;
        // groups 1 and 3 are not, and the log no longer tells whether they ever were. Account
        // b shows one notification per group (groupSizeMax=1): its notification 1 is out of
        // view at the base, behind notification 2.
        let before = """
            {"type":"options","account":"a","groupCountMax":1}
            {"type":"notify","account":"a","chat":"c1","kind":"message","id":1,"date":100}
            {"type":"notify","account":"a","chat":"c2","kind":"message","id":1,"date":200}
            {"type":"notify","account":"a","chat":"c3","kind":"message","id":1,"date":50}
            {"type":"options","account":"b","groupSizeMax":1}
            {"type":"notify","account":"b","chat":"c","kind":"message","id":1,"date":100}
            {"type":"notify","account":"b","chat":"c","kind":"message","id":2,"date":101}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: before).status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        // Group 4 pushes group 2 out and group 5 is created out of view; then each group in
        // view is dismissed in turn, bringing in 2 (seen in view after the base), 1, 3 (out
        // of view at the base) and 5 (created after the base). In b, notification 1 comes
        // into view, is pushed out by notification 3, and comes back.
        let after = """
            {"type":"notify","account":"a","chat":"c4","kind":"message","id":1,"date":300}
            {"type":"notify","account":"a","chat":"c5","kind":"message","id":1,"date":10}
            {"type":"dismiss","account":"a","notificationId":4}
            {"type":"dismiss","account":"a","notificationId":2}
            {"type":"dismiss","account":"a","notificationId":1}
            {"type":"dismiss","account":"a","notificationId":3}
            {"type":"dismiss","account":"b","notificationId":2}
            {"type":"notify","account":"b","chat":"c","kind":"message","id":3,"date":102}
            {"type":"dismiss","account":"b","notificationId":3}

            """
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: after).status == 0)
        let audit = { (account: String, target: [String]) in
            try CLI.run(["audit", "--store", store, "--account", account] + target).stdout
        }
        let unknown = "(silently); whether it was shown before the base snapshot at seq 7 is not in the log"
        for target in [["--notification", "1"], ["--group", "1"], ["--chat", "c1"]] {
            let first = try audit("a", target)
            #expect(first.contains("notification 1 came into view: group 1 came into the top groupCountMax=1 when group 2 (c2) left the view \(unknown)"), "\(target): \(first)")
            #expect(!first.contains("shown again"), "\(target): \(first)")
        }
        let json = Shared.lines(try audit("a", ["--notification", "3", "--json"]))
        // First the notification as it stood at the base, then what happened to it after.
        #expect(json.first?.contains(#""atBase":true"#) == true && json.first?.contains("active but out of view") == true, "\(json)")
        #expect(json.dropFirst().first?.contains(#""kind":"shownAfterBase""#) == true, "\(json)")
        #expect(try audit("a", ["--notification", "2"]).contains("notification 2 shown again: group 2 came back into the top groupCountMax=1 when group 4 (c4) left the view (silently)\n"))
        #expect(try audit("a", ["--notification", "5"]).contains("notification 5 shown for the first time: group 5 came into the top groupCountMax=1 when group 3 (c3) left the view (silently)\n"))
        let size = try audit("b", ["--notification", "1"])
        #expect(size.contains("notification 1 came into view: newer notifications left group 1, making room \(unknown)"), "\(size)")
        #expect(size.contains("notification 1 shown again: newer notifications left group 1, making room (silently)\n"), "\(size)")
    }

    @Test("purge removes an account from every file and leaves the others intact")
    func purge() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        _ = try CLI.run(["snapshot", "--store", store])
        let keepBefore = try CLI.run(["state", "--store", store, "--account", "tg:keep", "--json"]).stdout
        let purge = try CLI.run(["purge", "--store", store, "--account", "tg:secret-person", "--yes"])
        #expect(purge.status == 0, "\(purge.stderr)")
        let keepAfter = try CLI.run(["state", "--store", store, "--account", "tg:keep", "--json"]).stdout
        // The other account's state is the same but for the store's seq.
        #expect(keepAfter.drop(while: { $0 != "[" }) == keepBefore.drop(while: { $0 != "[" }))
        let files = FileManager.default.enumerator(atPath: store)!.compactMap { $0 as? String }
        for file in files {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: store + "/" + file, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: store + "/" + file))
            #expect(bytes.range(of: Data("secret-person".utf8)) == nil, "\(file) still holds the purged account")
        }
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        #expect(!(try CLI.run(["export", "--store", store]).stdout.contains("secret-person")))
    }

    @Test("a data file LMDB cannot open is reported with exit 2, by readers and writers alike")
    func unopenableDataFile() throws {
        let dir = TemporaryDirectory()
        for (name, bytes) in [("text", Data("hello\n".utf8)), ("empty", Data()), ("noise", Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))] {
            let store = dir.child(name)
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
            try bytes.write(to: URL(fileURLWithPath: store + "/data.mdb"))
            // (An empty data file is what LMDB itself leaves before its first commit: a writer
            // may start a store in it, so only readers are asked about that one.)
            for command in [["verify"], ["state"], ["stats"]] + (bytes.isEmpty ? [] : [["ingest", "-"]]) {
                let result = try CLI.run(command + ["--store", store], input: "")
                #expect(result.status == 2, "\(name) \(command): exit \(result.status), \(result.stderr)")
                #expect(result.stderr.contains(store), "\(name) \(command): \(result.stderr)")
            }
            // Nothing was written over the damaged file.
            #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")) == bytes)
        }
    }

    @Test("reading commands read a copy they may not write (read-only media, another owner)")
    func readOnlyCopy() throws {
        // Root may write anything: read as `nobody` through setpriv, where that is possible.
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: nobody[0]),
            (try? CLI.run(["--help"], launcher: nobody))?.status == 0
        else { return }
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let expected = try CLI.run(["state", "--store", store, "--json"]).stdout
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        let files = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        var before: [String: Data] = [:]
        for file in files {
            before[file] = try Data(contentsOf: URL(fileURLWithPath: store + "/" + file))
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: store + "/" + file)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: store)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: store) }
        let state = try CLI.run(["state", "--store", store, "--json"], launcher: nobody)
        #expect(state.status == 0, "\(state.stderr)")
        let sameState = state.stdout == expected
        #expect(sameState, "the state read as nobody differs from the owner's")
        for command in [["verify"], ["stats"], ["export"]] {
            let result = try CLI.run(command + ["--store", store], launcher: nobody)
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        let ingest = try CLI.run(["ingest", "--store", store, "-"], input: "", launcher: nobody)
        #expect(ingest.status == 2, "a writer is refused: \(ingest.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == files)
        for file in files { #expect(try Data(contentsOf: URL(fileURLWithPath: store + "/" + file)) == before[file]) }
    }

    @Test("verify reports a damaged record with its seq and exits 2")
    func verifyDamage() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        #expect(try CLI.run(["verify", "--store", store]).status == 0)
        // Flip one byte of one record's title inside data.mdb, as a disk fault would.
        let file = URL(fileURLWithPath: store + "/data.mdb")
        var data = try Data(contentsOf: file)
        let marker = try #require(data.range(of: Data("MARKER-tg:keep".utf8)))
        data[marker.lowerBound + 2] ^= 0x20
        try data.write(to: file)
        let verify = try CLI.run(["verify", "--store", store])
        #expect(verify.status == 2)
        #expect(verify.stdout.contains("seq"))
        // Opening for state replays the log: the damage stops it with the seq, exit 2, no trap.
        let state = try CLI.run(["state", "--store", store, "--no-snapshots"])
        #expect(state.status == 2)
        #expect(state.stderr.contains("damaged"))
    }
}
