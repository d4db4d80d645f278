import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald import`: load an export into an empty store, keeping seqs, times and sources.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load the output of `herald export` into an empty store, reproducing its state.",
        discussion: """
            Each line keeps its seq, recorded time and ingest format, so the new store's
            state (seq included) equals the original's. Any bad line rejects the whole
            import. (Exports made before the ingest format was called `format` name it
            `source`; those read back too, except for `note` lines, which they wrote with
            two `source` keys.)

            Example:
              herald export --store ./a.db > all.jsonl
              herald import --store ./b.db all.jsonl
            """
    )

    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("The export file, or - for standard input.", valueName: "FILE"))
    var input: String

    @Flag(name: .long, help: "Print {\"imported\":…,\"lastSeq\":…} on stdout.")
    var json = false

    /// The keys `herald export` adds to each event. `source` is the ingest format's key in
    /// older exports; in a `note` line it is the note's own field.
    private struct Envelope: Decodable {
        var seq: UInt64
        var recorded: String
        var format: String?
        var source: String?
        var digest: String?
    }

    func run() throws {
        // The input first: a missing file leaves no empty store behind.
        var reader = try LineReader(path: input)
        defer { reader.close() }
        let target = try store.openForWriting()
        guard target.lastSeq == 0 else {
            throw CLIFailure(exitCode: CLIFailure.usage, "store \(target.path) is not empty (last seq \(target.lastSeq)); import needs an empty store")
        }
        let decoder = JSONDecoder()
        var records: [LogRecord] = []
        var failures = 0
        var previousSeq = target.lastSeq
        while let line = try reader.next() {
            if line.isEmpty { continue }
            do {
                let event = try Event(json: line)
                let envelope: Envelope
                do {
                    envelope = try decoder.decode(Envelope.self, from: Data(line))
                } catch let error as DecodingError {
                    throw EventError(field: Self.field(of: error), reason: "missing or invalid (export lines carry seq, recorded, format)")
                }
                let isNote = if case .note = event.payload { true } else { false }
                guard let format = envelope.format ?? (isNote ? nil : envelope.source) else {
                    throw EventError(field: "format", reason: "missing (export lines carry seq, recorded, format)")
                }
                guard envelope.seq >= 1, envelope.seq <= SeqKey.maximum else {
                    throw EventError(field: "seq", reason: "\(envelope.seq) is outside 1…\(SeqKey.maximum)")
                }
                guard envelope.seq > previousSeq else {
                    throw EventError(field: "seq", reason: "\(envelope.seq) does not come after seq \(previousSeq) (export lines are in increasing seq order)")
                }
                previousSeq = envelope.seq
                guard let recorded = Formatting.parseISO(envelope.recorded) else {
                    throw EventError(field: "recorded", reason: "not an ISO 8601 time")
                }
                records.append(LogRecord(
                    seq: envelope.seq, recordedAt: recorded,
                    source: Source(format: format, digest: try envelope.digest.map(Self.digest)), event: event))
            } catch {
                failures += 1
                Terminal.error("\(Formatting.escaped(reader.name)):\(reader.lineNumber): \(error)")
            }
        }
        guard failures == 0 else {
            throw CLIFailure(exitCode: CLIFailure.rejected, "\(failures) bad line\(failures == 1 ? "" : "s"); nothing was imported")
        }
        let applied = try target.importRecords(records)
        // A long import crosses the snapshot interval: let that snapshot end before exit.
        target.waitForBackgroundSnapshot()
        if json {
            Terminal.line(#"{"imported":\#(applied.count),"lastSeq":\#(target.lastSeq)}"#)
        } else {
            Terminal.note("imported \(applied.count) events; last seq \(target.lastSeq)")
        }
    }

    private static func field(of error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): key.stringValue
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath.last?.stringValue ?? ""
        @unknown default: ""
        }
    }

    private static func digest(_ hex: String) throws -> [UInt8] {
        let bytes = Array(hex.utf8)
        guard bytes.count == Source.digestLength * 2 else { throw EventError(field: "digest", reason: "expected \(Source.digestLength * 2) hex digits") }
        return try stride(from: 0, to: bytes.count, by: 2).map { i in
            guard let byte = UInt8(String(decoding: bytes[i...i + 1], as: UTF8.self), radix: 16) else {
                throw EventError(field: "digest", reason: "not hexadecimal")
            }
            return byte
        }
    }
}
