import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald export`: the log as canonical JSONL with seq, recorded time and source.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the log as canonical JSONL, each line with its seq, recorded time and ingest format.",
        discussion: """
            Records that compaction moved to the archive are included; history compacted
            without an archive is gone, and a note on stderr says so. The output reads
            back with `herald import` (or `herald ingest --format herald`, which ignores
            the extra keys).

            Example:
              herald export --store ./herald.db --account tg:14124122 > tg.jsonl
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "First seq to export.")
    var from: UInt64 = 1

    @Option(name: .long, help: "Last seq to export (default: the end of the log).")
    var to: UInt64?

    @Option(name: .long, help: "Only this account's events.")
    var account: String?

    func run() throws {
        let target = try store.openForReading { $0.replayOnOpen = false }
        if let base = try target.history.bounds().droppedThrough, from <= base {
            Terminal.noteDroppedHistory(through: base, "export", "starts after it, and a store imported from it lacks those events", how: try target.droppedHistoryExplanation())
        }
        var writer = JSONWriter()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        var exported = 0
        func emit(_ record: LogRecord) -> Bool {
            exported += 1
            writer.reset()
            record.writeExportLine(to: &writer)
            buffer.append(contentsOf: writer.bytes)
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count > 1 << 20 {
                Terminal.bytes(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            return true
        }
        if let account {
            // Every record is still checked; only the account's are decoded.
            try target.history.forEach(from: from, through: to ?? .max, account: account, emit)
            if exported == 0, let unknown = try CLIFailure.unknownAccount(account, in: target) { throw unknown }
        } else {
            try target.history.forEach(from: from, through: to ?? .max, emit)
        }
        Terminal.bytes(buffer)
    }
}
