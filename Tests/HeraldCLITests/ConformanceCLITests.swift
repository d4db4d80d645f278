import Foundation
import Testing
import HeraldTestSupport

@Suite("herald state and replay on the conformance cases", .processThreads)
struct ConformanceCLITests {
    @Test("ingest, then state --json and replay --updates --json print the expected forms", arguments: Shared.conformanceCases)
    func conformanceCase(name: String) throws {
        let dir = TemporaryDirectory()
        let store = dir.child("store")
        let events = Shared.path("conformance/\(name).events.jsonl")
        let ingest = try CLI.run(["ingest", "--store", store, "--format", "herald", events])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let state = try CLI.run(["state", "--store", store, "--json"])
        #expect(state.status == 0)
        let expected = try String(contentsOfFile: Shared.path("conformance/\(name).expected.json"), encoding: .utf8)
        #expect(try Shared.json(state.stdout) == Shared.json(expected))
        // Through the environment variable instead of --store, too.
        let viaEnvironment = try CLI.run(["state", "--json"], environment: ["HERALD_STORE": store])
        #expect(viaEnvironment.stdout == state.stdout)
        let updatesFile = Shared.path("conformance/\(name).updates.jsonl")
        guard FileManager.default.fileExists(atPath: updatesFile) else { return }
        let replay = try CLI.run(["replay", "--store", store, "--updates", "--json"])
        #expect(replay.status == 0)
        let got = Shared.lines(replay.stdout), want = Shared.lines(try String(contentsOfFile: updatesFile, encoding: .utf8))
        #expect(got.count == want.count)
        for (g, w) in zip(got, want) { #expect(try Shared.json(g) == Shared.json(w)) }
    }
}
