import Foundation
import HeraldEvents
@testable import HeraldStore
import Synchronization
import Testing
@testable import herald
import HeraldTestSupport

/// `herald ingest` decodes the next batch while the previous one commits (`BatchAppender`).
@Suite("Ingest appends batches on a second thread")
struct BatchAppenderTests {
    static func notify(_ index: Int) -> String {
        #"{"type":"notify","account":"tg:\#(index % 3)","chat":"user:\#(index % 7)","kind":"message","id":\#(index + 1),"date":\#(index)}"#
    }

    @Test("many small batches: every event acknowledged once, in order, and stored in input order")
    func acknowledgedInOrder() throws {
        let dir = TemporaryDirectory()
        var lines: [String] = []
        for index in 0..<500 {
            lines.append(Self.notify(index))
            if index % 97 == 50 { lines.append("not json") }  // rejected lines between batches
        }
        let result = try CLI.run(
            ["ingest", "--store", dir.child("s"), "--batch-size", "7", "--print-seqs", "-"],
            input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 3)  // some lines were rejected
        #expect(result.stderr.contains("500 events appended (seq 1…500)"))
        #expect(Shared.lines(result.stdout) == (1...500).map { "ack \($0)"[...] })
        let store = try Store(path: dir.child("s"), options: { var o = Store.Options(); o.readOnly = true; return o }())
        let stored = try store.records().map(\.event)
        let expected = try (0..<500).map { try Event(json: Self.notify($0)) }
        #expect(stored == expected)
    }

    @Test("a failed commit stops the appending: earlier batches stay, later ones are not appended, the error is thrown")
    func failureStops() throws {
        let dir = TemporaryDirectory()
        let commits = Atomic<Int>(0)
        var options = Store.Options()
        options.durability = .noSync
        options.commitFault = {
            // The third log commit fails, as a full disk would.
            if commits.add(1, ordering: .relaxed).newValue == 3 { throw CocoaError(.fileWriteOutOfSpace) }
        }
        let store = try Store(path: dir.child("s"), options: options)
        let durable = Mutex<[ClosedRange<UInt64>]>([])
        let appender = BatchAppender(store: store) { seqs, _ in durable.withLock { $0.append(seqs) } }
        let events = try (0..<50).map { (try Event(json: Self.notify($0)), Source.library) }
        var thrown: (any Error)?
        do {
            for start in stride(from: 0, to: 50, by: 10) { try appender.submit(Array(events[start..<(start + 10)])) }
            try appender.finish()
        } catch {
            thrown = error
        }
        #expect(thrown != nil)
        #expect(durable.withLock { $0 } == [1...10, 11...20])
        #expect(try store.recordCount() == 20)
        #expect(try store.records().map(\.event) == events[..<20].map(\.0))
        // The appender keeps refusing after a failure.
        #expect(throws: (any Error).self) { try appender.submit(Array(events[0..<1])) }
    }
}
