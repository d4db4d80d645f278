import Foundation
import Testing
import HeraldTestSupport

@Suite("herald backup", .processThreads)
struct BackupCommandTests {
    @Test("backup writes a verified copy that reads as the store; --json reports its figures")
    func backupAndRestore() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let lines = (1...120).map {
            #"{"type":"notify","account":"tg:1","chat":"chat:\#($0 % 7)","kind":"message","id":\#($0),"date":\#(1_000 + $0),"title":"t","body":"b\#($0)"}"#
        }
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: lines.joined(separator: "\n") + "\n").status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--archive"]).status == 0)

        let plain = try CLI.run(["backup", "--store", store, "--to", dir.child("b1")])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout.contains("backup written to \(dir.child("b1")):"))
        #expect(plain.stdout.contains("seqs 1…120"))
        #expect(plain.stdout.contains("no problems"))

        let json = try CLI.run(["backup", "--store", store, "--to", dir.child("b2"), "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let report = try #require(try Shared.json(json.stdout) as? [String: Any])
        #expect(report["lastSeq"] as? Int == 120)
        #expect(report["firstSeq"] as? Int == 1)
        #expect((report["bytes"] as? Int ?? 0) > 0)
        #expect(report["seconds"] is Double || report["seconds"] is Int)
        #expect(report["environments"] as? [String] == ["archive", "."])
        #expect((report["verify"] as? [String: Any])?["clean"] as? Bool == true)

        // The copy is the store: the same state and history, and it verifies.
        for copy in [dir.child("b1"), dir.child("b2")] {
            #expect(try CLI.run(["state", "--store", copy, "--json"]).stdout == CLI.run(["state", "--store", store, "--json"]).stdout)
            #expect(try CLI.run(["export", "--store", copy]).stdout == CLI.run(["export", "--store", store]).stdout)
            #expect(try CLI.run(["verify", "--store", copy]).status == 0)
        }
    }

    @Test("backup refuses a directory that is not empty (exit 2) and a missing store (exit 2)")
    func refusals() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: #"{"type":"notify","account":"tg:1","chat":"c","kind":"message","id":1,"date":1}"# + "\n").status == 0)
        #expect(try CLI.run(["backup", "--store", store, "--to", dir.child("b")]).status == 0)
        let again = try CLI.run(["backup", "--store", store, "--to", dir.child("b")])
        #expect(again.status == 2)
        #expect(again.stderr.contains("no backup written to \(dir.child("b")): it exists and is not empty"), "\(again.stderr)")
        let missing = try CLI.run(["backup", "--store", dir.child("none"), "--to", dir.child("c")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no Herald store"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.child("c")))
    }
}
