import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Issue #25: the README's "Embedding the library" example runs as written and ends.
@Suite("README examples")
struct ReadmeExampleTests {
    /// The Swift block of the README's "Embedding the library" section that starts with its
    /// imports (the one before it is the manifest's lines).
    static func readmeExample() throws -> [String] {
        let readme = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/HeraldStoreTests/ReadmeExampleTests.swift", with: "README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Embedding the library"))
        let opening = try #require(readme.range(of: "```swift\nimport", range: section.upperBound..<readme.endIndex))
        let body = readme.index(opening.lowerBound, offsetBy: "```swift\n".count)
        let end = try #require(readme.range(of: "```", range: body..<readme.endIndex))
        return readme[body..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// This file's copy of the example, between the markers below, with the temporary
    /// directory standing where the README names a path.
    static func testedExample() throws -> [String] {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let begin = try #require(source.range(of: "// README example begins\n"))
        let finish = try #require(source.range(of: "        // README example ends", range: begin.upperBound..<source.endIndex))
        return ["import HeraldEvents", "import HeraldProjection", "import HeraldStore", ""]
            + source[begin.upperBound..<finish.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
                String($0.dropFirst(8)).replacingOccurrences(of: "dir.path", with: #""/path/to/herald.db""#)
            }
    }

    @Test("the README's embedding example is this test's code, runs, and ends")
    func embeddingExample() async throws {
        #expect(try Self.readmeExample() == Self.testedExample())
        let dir = TemporaryDirectory()
        // README example begins
        let store = try Store(path: dir.path)          // opens or creates; rebuilds state
        let follower = Task {                                       // every event after seq 0, then live
            for try await applied in store.appliedEvents(after: 0) { print(applied) }
        }
        let applied = try await store.append(Event(account: "tg:1", .notify(.init(
            chat: "user:5", kind: .message, id: 42, date: 1_754_385_290, title: "Alice", body: "hi"))))
        print(applied.seq, applied.updates)                        // durable when append returns
        let view = store.activeNotifications(account: "tg:1")       // what to show after a restart
        store.close()                                               // ends the follower's loop
        try await follower.value
        // README example ends
        #expect(applied.seq == 1 && view.first?.notifications.first?.title == "Alice")
    }
}
