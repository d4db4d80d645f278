import Foundation
import HeraldEvents
import HeraldProjection
import Testing
import HeraldTestSupport

/// One case of `Tests/Fixtures/conformance/`: events, the expected final state and, for some,
/// the expected updates of every event.
struct ConformanceCase: CustomTestStringConvertible, Sendable {
    let name: String
    var testDescription: String { name }

    /// The conformance folder (`Tests/Fixtures/conformance`).
    static let directory = Fixtures.conformance

    /// Every case in the folder, by name.
    static let all: [ConformanceCase] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".events.jsonl") }
            .map { ConformanceCase(name: String($0.dropLast(".events.jsonl".count))) }
            .sorted { $0.name < $1.name }
    }()

    func lines(_ suffix: String) throws -> [String]? {
        let url = Self.directory.appendingPathComponent(name + suffix)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    func events() throws -> [Event] {
        try (lines(".events.jsonl") ?? []).map { try Event(json: $0) }
    }
}

@Suite struct ConformanceTests {
    @Test func casesExist() {
        #expect(ConformanceCase.all.count >= 11, "conformance folder not found at \(ConformanceCase.directory.path)")
    }

    @Test(arguments: ConformanceCase.all)
    func conformance(_ testCase: ConformanceCase) throws {
        let events = try testCase.events()
        let expectedUpdates = try testCase.lines(".updates.jsonl")
        if let expectedUpdates { #expect(expectedUpdates.count == events.count) }
        var projection = Projection()
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let outcome = projection.apply(event, seq: seq)
            if let expectedUpdates, index < expectedUpdates.count {
                let actual = Projection.updatesJSON(seq: seq, account: event.account, updates: outcome.updates)
                let same = try JSONParser.parse(Array(actual.utf8)) == JSONParser.parse(Array(expectedUpdates[index].utf8))
                #expect(same, "seq \(seq): \(event.jsonString)\n  actual:   \(actual)\n  expected: \(expectedUpdates[index])")
                if !same { break }
            }
        }
        projection.checkAllInvariants()
        let expected = try #require(try testCase.lines(".expected.json")).joined()
        let actual = projection.stateJSON()
        #expect(try JSONParser.parse(Array(actual.utf8)) == JSONParser.parse(Array(expected.utf8)), "\n  actual:   \(actual)\n  expected: \(expected)")
    }
}

/// The reference model (``ReferenceProjection``), which the random workload tests hold the
/// fast projection to, must itself pass every conformance case: the cases are generated
/// from SEMANTICS.md, the reference is read from it independently.
@Suite struct ReferenceConformanceTests {
    /// Every case but the byte-exact names one: the reference keys chats and accounts by
    /// `String`, whose `==` is Unicode canonical equivalence, on purpose kept naive.
    static let cases = ConformanceCase.all.filter { $0.name != "13-names-byte-exact" }

    @Test(arguments: cases)
    func reference(_ testCase: ConformanceCase) throws {
        let events = try testCase.events()
        let expectedUpdates = try testCase.lines(".updates.jsonl")
        var reference = ReferenceProjection()
        var names: [String] = []
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let updates = reference.apply(event, seq: seq)
            if !names.contains(event.account) { names.append(event.account) }
            if let expectedUpdates, index < expectedUpdates.count {
                let actual = Projection.updatesJSON(seq: seq, account: event.account, updates: updates)
                let same = try JSONParser.parse(Array(actual.utf8)) == JSONParser.parse(Array(expectedUpdates[index].utf8))
                #expect(same, "seq \(seq): \(event.jsonString)\n  actual:   \(actual)\n  expected: \(expectedUpdates[index])")
                if !same { break }
            }
        }
        let accounts = names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map(reference.accountJSON)
        let actual = "{\"seq\":\(events.count),\"accounts\":[\(accounts.joined(separator: ","))]}"
        let expected = try #require(try testCase.lines(".expected.json")).joined()
        #expect(try JSONParser.parse(Array(actual.utf8)) == JSONParser.parse(Array(expected.utf8)), "\n  actual:   \(actual)\n  expected: \(expected)")
    }
}
