import Foundation
import HeraldEvents
import HeraldIngest
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldStore

/// `IngestSession` over a real store in a temporary directory, reading real files.
@Suite("ingest session")
struct IngestSessionTests {
    static func notify(_ index: Int) -> String {
        #"{"type":"notify","account":"tg:\#(index % 3)","chat":"user:\#(index % 7)","kind":"message","id":\#(index + 1),"date":\#(index)}"#
    }

    static func configuration(
        input: String = "input", allOrNothing: Bool = false, batchSize: Int = IngestSession.Configuration.defaultBatchSize
    ) -> IngestSession.Configuration {
        .init(
            decoder: PayloadDecoder(format: .herald, context: IngestContext(receivedAt: 1_700_000_000)),
            input: input, allOrNothing: allOrNothing, batchSize: batchSize)
    }

    /// Writes `lines` to a file in `directory` and opens it.
    static func reader(_ lines: [String], in directory: TemporaryDirectory) throws -> LineReader {
        let path = directory.child("input.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return try LineReader(path: path)
    }

    @Test("many small batches: each committed once, in order, events stored in input order, rejected lines quarantined")
    func batchesInOrder() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.child("s"))
        var lines: [String] = []
        var badLines: [Int] = []
        for index in 0..<500 {
            lines.append(Self.notify(index))
            if index % 97 == 50 {
                lines.append("not json")  // rejected lines between batches
                badLines.append(lines.count)
            }
        }
        var reader = try Self.reader(lines, in: directory)
        defer { reader.close() }
        var session = IngestSession(store: store, configuration: Self.configuration(batchSize: 7))
        var committed: [ClosedRange<UInt64>] = []
        var rejected: [Int] = []
        let summary = try session.ingest(&reader) { report in
            switch report {
            case .committed(let seqs): committed.append(seqs)
            case .rejected(let rejection): rejected.append(rejection.line)
            case .progress: break
            }
        }
        #expect(committed.flatMap { Array($0) } == Array(1...500))
        #expect(committed.allSatisfy { $0.count <= 7 })
        #expect(rejected == badLines)
        #expect(summary.lines == 500 + badLines.count)
        #expect(summary.appended == 500 && summary.firstSeq == 1 && summary.lastSeq == 500)
        #expect(summary.rejected == badLines.count)
        #expect(summary.quarantineIds == (1...UInt64(badLines.count)).map { $0 })
        let expected = try (0..<500).map { try Event(json: Self.notify($0)) }
        #expect(try store.history.records().map(\.event) == expected)
        let quarantined = try store.quarantine.all()
        #expect(quarantined.map(\.line) == badLines)
        #expect(quarantined.allSatisfy { $0.raw == Array("not json".utf8) && $0.input == "input" && $0.format == "herald" })
    }

    @Test("add decodes without touching the store; commit appends the batch with each payload's digest")
    func addThenCommit() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.child("s"))
        var session = IngestSession(store: store, configuration: Self.configuration())
        let payload = Array(Self.notify(1).utf8)
        #expect(session.add(payload[...], line: 1) == .accepted(events: 1))
        #expect(session.add(Array(" \t".utf8)[...], line: 2) == .blank)
        guard case .rejected(let rejection) = session.add(Array(#"{"type":"notify"}"#.utf8)[...], line: 3) else {
            Issue.record("a notify without an account is rejected")
            return
        }
        #expect(rejection.line == 3 && rejection.error.format == .herald)
        #expect(session.pendingEvents == 1)
        #expect(try store.history.bounds().recordCountInLog == 0 && store.quarantine.all().isEmpty)
        #expect(try session.commit() == 1...1)
        let record = try #require(try store.history.records().first)
        #expect(record.source == Source(format: "herald", payload: payload))
        #expect(try store.quarantine.all().map(\.line) == [3])
        #expect(try session.finish().lines == 2)
    }

    @Test("all or nothing: one rejected payload appends nothing and quarantines it; none appends all in one commit")
    func allOrNothing() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.child("s"))
        var session = IngestSession(store: store, configuration: Self.configuration(allOrNothing: true, batchSize: 2))
        for index in 0..<5 { _ = session.add(Array(Self.notify(index).utf8)[...], line: index + 1) }
        _ = session.add(Array("oops".utf8)[...], line: 6)
        #expect(!session.isBatchFull)
        #expect(try session.commit() == nil)  // only finish commits
        let summary = try session.finish()
        #expect(summary.appended == 0 && summary.rejected == 1 && summary.quarantineIds == [1])
        #expect(try store.history.bounds().recordCountInLog == 0)

        var clean = IngestSession(store: store, configuration: Self.configuration(allOrNothing: true, batchSize: 2))
        for index in 0..<5 { _ = clean.add(Array(Self.notify(index).utf8)[...], line: index + 1) }
        let stored = try clean.finish()
        #expect(stored.appended == 5 && stored.firstSeq == 1 && stored.lastSeq == 5)
    }

    @Test("a failed commit stops the session: earlier batches stay durable, later ones are not appended, the error is thrown")
    func failureStops() throws {
        let directory = TemporaryDirectory()
        let commits = Atomic<Int>(0)
        var options = Store.Options()
        options.durability = .noSync
        options.commitFault = {
            // The third log commit fails, as a full disk would.
            if commits.add(1, ordering: .relaxed).newValue == 3 { throw CocoaError(.fileWriteOutOfSpace) }
        }
        let store = try Store(path: directory.child("s"), options: options)
        var reader = try Self.reader((0..<50).map(Self.notify), in: directory)
        defer { reader.close() }
        var session = IngestSession(store: store, configuration: Self.configuration(batchSize: 10))
        var committed: [ClosedRange<UInt64>] = []
        #expect(throws: (any Error).self) {
            _ = try session.ingest(&reader) { report in
                if case .committed(let seqs) = report { committed.append(seqs) }
            }
        }
        #expect(committed == [1...10, 11...20])
        #expect(session.summary.appended == 20)
        #expect(try store.history.bounds().recordCountInLog == 20)
        #expect(try store.history.records().map(\.event) == (0..<20).map { try! Event(json: Self.notify($0)) })
    }

    @Test("a line over the limit is rejected with its size and SHA-256, and its prefix is quarantined")
    func overlongLine() throws {
        let directory = TemporaryDirectory()
        let store = try Store(path: directory.child("s"))
        // Well past the limit: a line found whole in the reader's buffer is returned whole.
        let size = LineReader.lineLimit + (2 << 20)
        let long = String(repeating: "x", count: size)
        var reader = try Self.reader([Self.notify(1), long, Self.notify(2)], in: directory)
        defer { reader.close() }
        var session = IngestSession(store: store, configuration: Self.configuration())
        var reasons: [String] = []
        let summary = try session.ingest(&reader) { report in
            if case .rejected(let rejection) = report { reasons.append(rejection.reason) }
        }
        #expect(summary.appended == 2 && summary.rejected == 1)
        #expect(reasons.count == 1)
        #expect(reasons.first?.hasPrefix("line of \(size) bytes exceeds the \(LineReader.lineLimit)-byte limit (SHA-256 ") == true)
        let entry = try #require(try store.quarantine.all().first)
        #expect(entry.line == 2 && entry.raw.count == LineReader.keptPrefix)
    }

    @Test("a missing input is a LineReader.Failure naming it")
    func missingInput() throws {
        let directory = TemporaryDirectory()
        do {
            _ = try LineReader(path: directory.child("none"))
            Issue.record("a missing file cannot be opened")
        } catch {
            #expect(error.description == directory.child("none") + ": cannot open: No such file or directory")
        }
    }
}
