import Foundation
import HeraldTestSupport
import Testing

/// `herald ingest --strings FILE`: localized alerts rendered with the app's strings table.
@Suite("herald ingest --strings", .processThreads)
struct IngestStringsTests {
    /// An APNs alert with a key and arguments (Apple's "Generating a remote notification").
    static let push = #"{"aps":{"alert":{"loc-key":"GAME_PLAY_REQUEST_FORMAT","loc-args":["Jenna","Frank"]}},"message_id":"5"}"# + "\n"

    @Test("a strings table renders the alert; without one the arguments are joined")
    func rendersWithTheTable() throws {
        let dir = TemporaryDirectory()
        let table = dir.child("Localizable.strings")
        try Data(#""GAME_PLAY_REQUEST_FORMAT" = "%@ and %@ have invited you to play Monopoly";"#.utf8)
            .write(to: URL(fileURLWithPath: table))
        let withTable = dir.child("a")
        let run = try CLI.run(
            ["ingest", "--store", withTable, "--format", "apns", "--account", "u", "--strings", table, "-"], input: Self.push)
        #expect(run.status == 0, "\(run.stderr)")
        let state = try CLI.run(["state", "--store", withTable, "--account", "u", "--json"]).stdout
        #expect(state.contains("Jenna and Frank have invited you to play Monopoly"))

        let without = dir.child("b")
        #expect(try CLI.run(["ingest", "--store", without, "--format", "apns", "--account", "u", "-"], input: Self.push).status == 0)
        let plain = try CLI.run(["state", "--store", without, "--account", "u", "--json"]).stdout
        #expect(plain.contains("Jenna: Frank"))
        #expect(!plain.contains("GAME_PLAY_REQUEST_FORMAT"))
    }

    @Test("a missing or broken strings file is a usage error naming it")
    func badTable() throws {
        let dir = TemporaryDirectory()
        let broken = dir.child("bad.strings")
        try Data(#""A" = "unterminated"#.utf8).write(to: URL(fileURLWithPath: broken))
        let run = try CLI.run(
            ["ingest", "--store", dir.child("s"), "--format", "apns", "--account", "u", "--strings", broken, "-"], input: Self.push)
        #expect(run.status != 0)
        #expect(run.stderr.contains("--strings"))
        #expect(run.stderr.contains("unterminated string"))
        let missing = try CLI.run(
            ["ingest", "--store", dir.child("s"), "--format", "apns", "--strings", dir.child("none"), "-"], input: Self.push)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--strings"))
    }
}
