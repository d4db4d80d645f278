import Foundation
import HeraldTestSupport
import Testing

@testable import herald

/// Issue #25: the command-line conventions users know from git, jq and kubectl.
@Suite("herald CLI conventions", .processThreads)
struct ConventionsCommandTests {
    @Test("--version prints the version and exits 0")
    func version() throws {
        let result = try CLI.run(["--version"])
        #expect(result.status == 0 && result.stdout.hasPrefix("herald ") && result.stdout.contains("SEMANTICS 1.2"), "\(result.stdout)")
    }

    @Test("a reader that stops early (| head) ends export and replay with exit 141, never the signal, and stderr stays quiet")
    func closedOutput() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("store")
        let lines = (1...4_000).map { id in
            #"{"type":"notify","account":"a","chat":"chat:\#(id % 40)","kind":"message","id":\#(id),"date":\#(1_700_000_000 + id),"title":"Alice","body":"a body long enough to fill the pipe quickly, line \#(id)"}"#
        }
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: lines.joined(separator: "\n") + "\n").status == 0)
        // Both write far more than a pipe holds (~800 KB), so they are still writing when it closes.
        for command in [["export"], ["replay", "--updates"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.executable)
            process.arguments = command + ["--store", store]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            // Read a little, as `head -c 100` does, then go away.
            _ = out.fileHandleForReading.readData(ofLength: 100)
            try out.fileHandleForReading.close()
            process.waitUntilExit()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit, "\(command): ended by a signal")
            #expect(process.terminationStatus == 141 && stderr.isEmpty, "\(command): \(process.terminationStatus) \(stderr)")
        }
    }

    @Test("output that cannot be written (a full disk: /dev/full) is exit 2 naming the error, never 0 with the output short")
    func unwritableOutput() throws {
        guard FileManager.default.isWritableFile(atPath: "/dev/full") else { return }
        let dir = TemporaryDirectory()
        let store = dir.child("store")
        let line = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1700000000,"title":"Alice"}"#
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: line + "\n").status == 0)
        for command in [["export"], ["state"], ["stats"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.executable)
            process.arguments = command + ["--store", store]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            let err = Pipe()
            process.standardError = err
            try process.run()
            process.waitUntilExit()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit && process.terminationStatus == 2, "\(command): \(process.terminationStatus)")
            #expect(stderr.contains("cannot write standard output") && stderr.contains("space"), "\(command): \(stderr)")
        }
    }

    @Test("a mistyped subcommand gets the nearest ones suggested, exit 1")
    func suggestions() throws {
        let stat = try CLI.run(["stat"])
        #expect(stat.status == 1 && stat.stderr.contains("did you mean") && stat.stderr.contains("'stats'"), "\(stat.stderr)")
        let verfy = try CLI.run(["verfy"])
        #expect(verfy.status == 1 && verfy.stderr.contains("'verify'"), "\(verfy.stderr)")
        #expect(GlobalOptions.unknownSubcommand(in: ["stats"], known: Herald.subcommandNames) == nil)
        #expect(GlobalOptions.unknownSubcommand(in: ["--help"], known: Herald.subcommandNames) == nil)
    }

    @Test("under --json an error is one JSON object on stderr with the exit code")
    func jsonErrors() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["stats", "--store", dir.child("missing"), "--json"])
        #expect(result.status == 2)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any])
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["exitCode"] as? Int == 2 && (error["message"] as? String)?.contains("missing") == true, "\(result.stderr)")
    }

    @Test("colour: --color always styles a pipe, NO_COLOR and TERM=dumb turn auto off, a bad mode is a usage error")
    func colour() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1}"# + "\n").status == 0)
        let always = try CLI.run(["state", "--store", store, "--color", "always"])
        #expect(always.status == 0 && always.stdout.contains("\u{1B}["), "\(always.stdout)")
        let plain = try CLI.run(["state", "--store", store, "--color=never"])
        #expect(plain.status == 0 && !plain.stdout.contains("\u{1B}["))
        #expect(try CLI.run(["state", "--store", store, "--color", "sometimes"]).status == 1)
        #expect(!Terminal.colorEnabled(for: .auto, environment: ["NO_COLOR": "1"]))
        #expect(!Terminal.colorEnabled(for: .auto, environment: ["TERM": "dumb"]))
        #expect(Terminal.colorEnabled(for: .always, environment: ["NO_COLOR": "1"]))
    }

    @Test("keys list --json prints ids and accounts, never key bytes")
    func keysJSON() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", DemoPayloads.telegramKey]).status == 0)
        let listed = try CLI.run(["keys", "list", "--store", store, "--json"])
        #expect(listed.status == 0 && listed.stdout.contains(#""account":"tg:1","bytes":256"#), "\(listed.stdout)")
        #expect(!listed.stdout.contains(String(DemoPayloads.telegramKey.prefix(20))))
        let id = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])?["id"] as? Int)
        let again = try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", "--json", DemoPayloads.telegramKey])
        #expect(again.stdout == #"{"id":\#(id),"account":"tg:1","added":false}"# + "\n", "\(again.stdout)")
        let removed = try CLI.run(["keys", "remove", "--store", store, "--json", "\(id)"])
        #expect(removed.status == 0 && removed.stdout == #"{"removed":\#(id)}"# + "\n", "\(removed.stdout)")
    }
}

@Suite("herald state --at forms", .processThreads)
struct AtFormsTests {
    @Test("--at takes dates, times without a zone, relative times and -N events before the end")
    func forms() throws {
        let now: Int64 = 1_764_000_000_000  // 2025-11-24T16:00:00Z
        #expect(Formatting.parseTime("2026-11-24") == 1_795_478_400_000)
        #expect(Formatting.parseTime("2026-11-24 10:00") == 1_795_514_400_000)
        #expect(Formatting.parseTime("2026-11-24T10:00:00Z") == 1_795_514_400_000)
        #expect(Formatting.parseTime("2026-11-24T11:00:00+01:00") == 1_795_514_400_000)
        #expect(Formatting.parseTime("-1h", now: now) == now - 3_600_000)
        #expect(Formatting.parseTime("-2d", now: now) == now - 172_800_000)
        #expect(Formatting.parseTime("yesterday", now: now) == 1_763_856_000_000)
        #expect(Formatting.parseTime("-1y", now: now) == nil)
        #expect(Formatting.parseTime("soon", now: now) == nil)
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let lines = (1...5).map { #"{"type":"notify","account":"a","chat":"c","kind":"message","id":\#($0),"date":1}"# }
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: lines.joined(separator: "\n") + "\n").status == 0)
        let back = try CLI.run(["state", "--store", store, "--at", "-2", "--json"])
        #expect(back.status == 0 && back.stdout.hasPrefix(#"{"seq":3"#), "\(back.stdout)\(back.stderr)")
        let tooFar = try CLI.run(["state", "--store", store, "--at", "-9"])
        #expect(tooFar.status == 1 && tooFar.stderr.contains("has only 5 seqs"), "\(tooFar.stderr)")
        // Everything was recorded just now: an hour ago the log was empty.
        let hourAgo = try CLI.run(["state", "--store", store, "--at", "-1h", "--json"])
        #expect(hourAgo.status == 0 && hourAgo.stdout.hasPrefix(#"{"seq":0"#), "\(hourAgo.stdout)\(hourAgo.stderr)")
        let bad = try CLI.run(["state", "--store", store, "--at", "soon"])
        #expect(bad.status == 1 && bad.stderr.contains("yesterday"), "\(bad.stderr)")
    }
}

@Suite("README support session", .processThreads)
struct SupportSessionTests {
    @Test("the README's typical support session works literally on the store herald demo --keep leaves")
    func supportSession() throws {
        let readme = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/HeraldCLITests/ConventionsCommandTests.swift", with: "README.md"), encoding: .utf8)
        let intro = try #require(readme.range(of: "A typical support session"))
        let start = try #require(readme.range(of: "```sh\n", range: intro.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let commands = readme[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
        #expect(commands.first?.hasPrefix("cp -r /tmp/herald-demo-1234 /tmp/case-4711 && export HERALD_STORE=/tmp/case-4711") == true)
        let demo = try CLI.run(["demo", "--keep"])
        #expect(demo.status == 0)
        let kept = try #require(demo.stdout.firstMatch(of: /herald state --store (\S+)/)).output.1
        defer { try? FileManager.default.removeItem(atPath: String(kept)) }
        let dir = TemporaryDirectory()
        let copy = dir.child("case-4711")
        try FileManager.default.copyItem(atPath: String(kept), toPath: copy)
        for command in commands.dropFirst() {
            let words = command.split(separator: " ").map(String.init)
            #expect(words.first == "herald")
            let result = try CLI.run(Array(words.dropFirst()), environment: ["HERALD_STORE": copy])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stdout.contains("never received") && !result.stdout.isEmpty, "\(command): \(result.stdout)")
        }
    }
}

@Suite("--json on verify and ingest", .processThreads)
struct MoreJSONTests {
    @Test("verify --json and ingest --json print one JSON object; a rejected line under --json is JSON on stderr")
    func verifyAndIngest() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let input = #"{"type":"notify","account":"a","chat":"c","kind":"message","id":1,"date":1}"# + "\n" + #"{"type":"bad"}"# + "\n"
        let ingest = try CLI.run(["ingest", "--store", store, "--json", "-"], input: input)
        #expect(ingest.status == 3)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stdout.utf8)) as? [String: Any])
        #expect(summary["appended"] as? Int == 1 && summary["rejected"] as? Int == 1 && summary["quarantineIds"] as? [Int] == [1], "\(ingest.stdout)")
        let rejected = try #require(try JSONSerialization.jsonObject(with: Data(ingest.stderr.utf8)) as? [String: Any])
        #expect((rejected["rejected"] as? [String: Any])?["line"] as? Int == 2, "\(ingest.stderr)")
        let verify = try CLI.run(["verify", "--store", store, "--json"])
        #expect(verify.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        #expect(report["clean"] as? Bool == true && report["recordsChecked"] as? Int == 1, "\(verify.stdout)")
    }
}

@Suite("--json on the maintenance commands", .processThreads)
struct MaintenanceJSONTests {
    @Test("snapshot, compact and purge --json print one JSON object each")
    func maintenance() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let input = (1...3).map { #"{"type":"notify","account":"a\#($0 % 2)","chat":"c","kind":"message","id":\#($0),"date":1}"# }.joined(separator: "\n") + "\n"
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: input).status == 0)
        let snapshot = try CLI.run(["snapshot", "--store", store, "--json"])
        #expect(snapshot.stdout == #"{"seq":3,"snapshots":[3]}"# + "\n", "\(snapshot.stdout)")
        let plan = try JSONSerialization.jsonObject(with: Data(try CLI.run(["compact", "--store", store, "--dry-run", "--json"]).stdout.utf8)) as? [String: Any]
        #expect(plan?["dryRun"] as? Bool == true && plan?["recordsArchived"] as? Int == 3, "\(String(describing: plan))")
        let compact = try JSONSerialization.jsonObject(with: Data(try CLI.run(["compact", "--store", store, "--json"]).stdout.utf8)) as? [String: Any]
        #expect(compact?["dryRun"] as? Bool == false && compact?["base"] as? Int == 3, "\(String(describing: compact))")
        let purge = try CLI.run(["purge", "--store", store, "--account", "a1", "--yes", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(purge.stdout.utf8)) as? [String: Any]
        #expect(report?["archivedRecordsRemoved"] as? Int == 2 && report?["account"] as? String == "a1", "\(purge.stdout)\(purge.stderr)")
    }
}

@Suite("control characters in file names", .processThreads)
struct EscapedNamesTests {
    @Test("a file name with a newline is escaped in FILE:LINE messages and in quarantine list")
    func newlineInFileName() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let file = dir.child("we\nird\u{1B}.jsonl")
        try Data(#"{"type":"bad"}"#.utf8 + [0x0A]).write(to: URL(fileURLWithPath: file))
        let ingest = try CLI.run(["ingest", "--store", store, file])
        #expect(ingest.status == 3)
        let message = ingest.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(message.hasSuffix(#"we\nird\u{1B}.jsonl:1: type: unknown event type "bad""#), "\(ingest.stderr)")
        let list = try CLI.run(["quarantine", "list", "--store", store])
        #expect(list.stdout.split(separator: "\n").count == 2 && list.stdout.contains(#"we\nird\u{1B}.jsonl:1"#), "\(list.stdout)")
        #expect(Formatting.escaped("a\\b\tc") == #"a\\b\tc"#)
    }
}
