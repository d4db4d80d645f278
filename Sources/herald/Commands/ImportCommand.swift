import ArgumentParser
import Foundation
import HeraldEvents
import HeraldIngest
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

    func run() throws {
        // The input first: a missing file leaves no empty store behind.
        var reader = try LineReader(path: input)
        defer { reader.close() }
        let target = try store.openForWriting()
        guard target.lastSeq == 0 else {
            throw CLIFailure(exitCode: CLIFailure.usage, "store \(target.path) is not empty (last seq \(target.lastSeq)); import needs an empty store")
        }
        var records: [LogRecord] = []
        var failures = 0
        var previousSeq = target.lastSeq
        while let line = try reader.next() {
            if line.isEmpty { continue }
            do {
                let line = try ExportLine(line)
                guard line.seq > previousSeq else {
                    throw EventError(field: "seq", reason: "\(line.seq) does not come after seq \(previousSeq) (export lines are in increasing seq order)")
                }
                previousSeq = line.seq
                guard let recorded = Formatting.parseISO(line.recorded) else {
                    throw EventError(field: "recorded", reason: "not an ISO 8601 time")
                }
                records.append(LogRecord(seq: line.seq, recordedAt: recorded, source: line.source, event: line.event))
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
        target.snapshots.waitUntilIdle()
        try target.auditIndex.catchUp()
        if json {
            Terminal.line(#"{"imported":\#(applied.count),"lastSeq":\#(target.lastSeq)}"#)
        } else {
            Terminal.note("imported \(applied.count) events; last seq \(target.lastSeq)")
        }
    }
}
