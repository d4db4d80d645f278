import Crypto
import Foundation
import Testing
import HeraldTestSupport

/// `herald` on damaged store copies (issue 22): exit 2 with a message naming the file and what
/// to do, never a signal; `herald salvage`; bounded memory on an overlong line; file modes.
@Suite("herald on damaged stores", .processThreads)
struct DamageCommandTests {
    /// `count` valid herald lines over a few accounts and chats.
    func lines(_ count: Int, from first: Int = 1) -> String {
        (first..<(first + count)).map { i in
            i % 5 == 0
                ? #"{"type":"read","account":"tg:\#(i % 3)","chat":"c\#(i % 7)","maxId":\#(i)}"#
                : #"{"type":"notify","account":"tg:\#(i % 3)","chat":"c\#(i % 7)","kind":"message","id":\#(i),"date":1700000000,"title":"t\#(i)","body":"\#(String(repeating: "b", count: i % 90))"}"#
        }.joined(separator: "\n") + "\n"
    }

    /// A store of `count` events, compacted so that no freed page holds a copy of a record.
    func makeStore(_ dir: TemporaryDirectory, count: Int = 2_000) throws -> String {
        let store = dir.child("store")
        try #require(try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: lines(count)).status == 0)
        try #require(try CLI.run(["compact", "--store", store]).status == 0)
        return store
    }

    static let readingCommands: [[String]] = [
        ["verify"], ["state"], ["state", "--no-snapshots"], ["export"], ["replay"], ["stats"],
        ["audit", "--account", "tg:1", "--chat", "c1"], ["quarantine", "list"], ["keys", "list"],
    ]

    @Test("a store cut short: every command exits 2 naming data.mdb and what to do, none dies")
    func truncated() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let file = store + "/data.mdb"
        try FileManager.default.setAttributes([:], ofItemAtPath: file)
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.truncate(atOffset: 8_192)
        try handle.close()
        for command in Self.readingCommands + [["ingest", "--format", "herald", "-"]] {
            let result = try CLI.run(command + ["--store", store], input: lines(3, from: 90_000))
            #expect(result.status == 2, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(file) && result.stderr.contains("cut short"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("herald salvage"), "\(command): \(result.stderr)")
        }
    }

    @Test("salvage names exactly the seqs a zeroed page lost, and the new store reads and verifies")
    func salvage() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        // Zero a leaf page of log records (8-byte keys, more than a few entries) in the middle.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")))
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        let pages = bytes.count / 4096
        var zeroed: Int?
        for page in stride(from: pages / 2, to: 2, by: -1) {
            let base = page * 4096
            let entries = (u16(base + 12) - 16) / 2
            guard u16(base + 10) == 2, entries > 5, u16(base + 16) + 8 < 4096 else { continue }
            if u16(base + u16(base + 16) + 6) == 8 {
                zeroed = page
                break
            }
        }
        let page = try #require(zeroed)
        bytes.replaceSubrange(page * 4096..<(page + 1) * 4096, with: repeatElement(0, count: 4096))
        try Data(bytes).write(to: URL(fileURLWithPath: store + "/data.mdb"))
        #expect(try CLI.run(["state", "--store", store]).status == 2)

        let salvaged = dir.child("salvaged")
        let result = try CLI.run(["salvage", "--store", store, "--to", salvaged, "--json"])
        #expect(result.status == 2, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let lost = try #require(report["lostSeqs"] as? [[Int]])
        let copied = try #require(report["recordsCopied"] as? Int)
        #expect(lost.count == 1 && copied == 2_000 - (lost[0][1] - lost[0][0] + 1), "\(result.stdout)")
        #expect(try CLI.run(["verify", "--store", salvaged]).status == 0)
        let export = try CLI.run(["export", "--store", salvaged])
        #expect(export.status == 0)
        let seqs = export.stdout.split(separator: "\n").count
        #expect(seqs == copied)
        // The salvaged store takes new events after the highest seq the old one gave out.
        let ingest = try CLI.run(["ingest", "--store", salvaged, "--format", "herald", "--print-seqs", "-"], input: lines(1, from: 5_000))
        #expect(ingest.status == 0 && ingest.stdout.contains("ack 2001"), "\(ingest.stdout) \(ingest.stderr)")
    }

    @Test("a line over the 8 MiB limit is streamed past: quarantined as a prefix with its size and SHA-256")
    func overlongLine() throws {
        let dir = TemporaryDirectory()
        let long = Array(#"{"x":""#.utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: 9 << 20) + Array(#""}"#.utf8)
        let input = lines(2) + String(decoding: long, as: UTF8.self) + "\n" + lines(2, from: 3)
        let store = dir.child("store")
        let result = try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: input)
        #expect(result.status == 3)
        let digest = SHA256.hash(data: long).map { String(format: "%02x", $0) }.joined()
        #expect(result.stderr.contains("-:3: line of \(long.count) bytes exceeds"), "\(result.stderr)")
        #expect(result.stderr.contains(digest))
        #expect((result.stdout + result.stderr).contains("4 events appended"), "\(result.stdout)")
        let stats = try CLI.run(["stats", "--store", store])
        #expect(stats.stdout.contains("1 payload (65536 B)"), "\(stats.stdout)")
    }

    @Test("a store's files are 0600 and its directories 0700: it may hold account credentials")
    func fileModes() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("store")
        try #require(try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: lines(50)).status == 0)
        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(store) == 0o700)
        for file in ["data.mdb", "lock.mdb", "herald.lock"] {
            #expect(try mode(store + "/" + file) == 0o600, "\(file)")
        }
    }

    @Test("keys remove leaves no copy of the key anywhere in the data file")
    func keyRemovalLeavesNoCopy() throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir, count: 50)
        var generator = SplitMix64(seed: 22)
        let key = (0..<256).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Data(key).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try #require(try CLI.run(["keys", "add", "--store", store, text]).status == 0)
        func fileHoldsKey() throws -> Bool {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: store + "/data.mdb")))
            return bytes.indices.dropLast(256).contains { bytes[$0] == key[0] && Array(bytes[$0..<$0 + 32]) == Array(key[..<32]) }
        }
        #expect(try fileHoldsKey())
        let listed = try CLI.run(["keys", "list", "--store", store])
        let id = try #require(listed.stdout.split(separator: "\n").dropFirst().first?.split(separator: " ").first)
        let removed = try CLI.run(["keys", "remove", "--store", store, String(id)])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try !fileHoldsKey())
        #expect(try CLI.run(["keys", "list", "--store", store]).stdout.contains(String(id)) == false)
    }

    @Test("a missing archive: whole-history commands exit 2 naming it; state from a snapshot answers with a note")
    func missingArchive() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("store")
        try #require(try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: lines(500)).status == 0)
        try #require(try CLI.run(["snapshot", "--store", store]).status == 0)
        let archived = try CLI.run(["compact", "--store", store, "--archive"])
        if archived.status != 0 { try #require(try CLI.run(["compact", "--store", store, "--yes"]).status == 0) }
        try #require(try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: lines(100, from: 501)).status == 0)
        let before = try CLI.run(["state", "--store", store, "--json"])
        try FileManager.default.removeItem(atPath: store + "/archive")
        for command in [["export"], ["replay"], ["state", "--no-snapshots"], ["audit", "--account", "tg:1", "--chat", "c1"]] {
            let result = try CLI.run(command + ["--store", store])
            #expect(result.status == 2 && result.stderr.contains("archive"), "\(command): \(result.stderr)")
        }
        let state = try CLI.run(["state", "--store", store, "--json"])
        #expect(state.status == 0 && state.stdout == before.stdout)
        #expect(state.stderr.contains("archive/ is missing"))
        // Nor does ingest start a new log over what is left when data.mdb goes too.
        try FileManager.default.removeItem(atPath: store + "/data.mdb")
        try FileManager.default.createDirectory(atPath: store + "/archive", withIntermediateDirectories: false)
        let ingest = try CLI.run(["ingest", "--store", store, "--format", "herald", "-"], input: lines(1))
        #expect(ingest.status == 2 && ingest.stderr.contains("data.mdb is missing"), "\(ingest.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store + "/data.mdb"))
    }
}
