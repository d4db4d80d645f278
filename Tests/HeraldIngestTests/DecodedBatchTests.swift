import HeraldEvents
@testable import HeraldIngest
import HeraldTestSupport
import Testing

/// `DecodedBatch`, the decode step the ingest session and the server share.
@Suite("decoded batch")
struct DecodedBatchTests {
    static let decoder = PayloadDecoder(format: .herald, context: IngestContext(receivedAt: 1_700_000_000))

    static func bytes(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    @Test("events of valid payloads in order; bad ones kept with line, field and bytes; blanks not counted")
    func eventsAndRejections() {
        var batch = DecodedBatch(decoder: Self.decoder)
        let good = #"{"type":"notify","account":"tg:1","chat":"user:5","kind":"message","id":7,"date":100}"#
        let read = #"{"type":"read","account":"tg:1","chat":"user:5","maxId":7}"#
        let bad = #"{"type":"notify","account":"tg:1","chat":"user:5","kind":"message","id":"x","date":100}"#
        #expect(batch.add(Self.bytes(good), line: 1) == .accepted(events: 1))
        #expect(batch.add(Self.bytes(" \t "), line: 2) == .blank)
        guard case .rejected(let rejection) = batch.add(Self.bytes(bad), line: 3) else {
            Issue.record("a notify with a string id was accepted")
            return
        }
        #expect(batch.add(Self.bytes(read), line: 4) == .accepted(events: 1))
        #expect(batch.events.map(\.0.type) == [.notify, .read])
        #expect(batch.rejections == [rejection])
        #expect(rejection.line == 3)
        #expect(rejection.error.field == "id")
        #expect(rejection.raw == Array(bad.utf8))
        #expect(rejection.reason.hasPrefix("id: "))
    }

    @Test("an overlong line is rejected whatever its prefix holds, naming its size and digest")
    func overlong() {
        var batch = DecodedBatch(decoder: Self.decoder)
        let prefix = #"{"type":"notify","account":"tg:1","chat":"user:5","kind":"message","id":7,"date":100}"#
        let verdict = batch.add(
            Self.bytes(prefix), line: 9, overlong: LineReader.Overlong(line: 9, size: 5_000_000, digest: "ab12"))
        guard case .rejected(let rejection) = verdict else {
            Issue.record("an overlong line was accepted")
            return
        }
        #expect(batch.events.isEmpty)
        #expect(rejection.reason.contains("5000000 bytes") && rejection.reason.contains("ab12"))
        #expect(rejection.raw.count == prefix.utf8.count)
    }
}
