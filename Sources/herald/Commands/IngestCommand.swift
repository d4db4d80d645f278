import ArgumentParser
import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore

/// `herald ingest`: append payloads, one per line, to the store.
struct IngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Append payloads (one per line) to the store's log.",
        discussion: """
            Valid lines are appended in order, in batches. Each bad line is reported as
            FILE:LINE: field: reason, kept in the store's quarantine and never enters the
            log; with --all-or-nothing nothing is appended if any line is bad. Reading a
            stream (a pipe, -), whatever has arrived is committed whenever ingest would wait
            for more, so a live feed is stored (and acknowledged) as it comes. A
            pretty-printed JSON document runs from a line that is just { (or [) to the line
            that is just the matching } (or ]); if it does not parse, or a line inside an
            object cannot be part of one (a one-line payload after a stray {), its lines
            count one by one.

            Example:
              herald ingest --store ./herald.db --format herald events.jsonl
              cat pushes.jsonl | herald ingest --format auto --account tg:14124122 -
            """
    )

    @OptionGroup var store: StoreOptions

    @OptionGroup var payload: PayloadOptions

    @Flag(name: .long, help: "Append nothing if any line is bad.")
    var allOrNothing = false

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    @Option(name: .long, help: "Events per commit.")
    var batchSize: Int = IngestSession.Configuration.defaultBatchSize

    @Flag(name: .long, help: "Print `ack SEQ` on stdout for every event as soon as its commit is durable.")
    var printSeqs = false

    @Flag(name: .long, help: "Print the summary as one JSON object on stdout (errors too are JSON, on stderr).")
    var json = false

    @Argument(help: ArgumentHelp("The input file, or - for standard input.", valueName: "FILE"))
    var input: String = "-"

    mutating func validate() throws {
        guard (1...1_000_000).contains(batchSize) else {
            throw ValidationError("--batch-size must be in 1...1000000, got \(batchSize)")
        }
    }

    func run() throws {
        // A bulk load snapshots once at the end rather than every `snapshotInterval` events
        // on the way (an explicit HERALD_SNAPSHOT_INTERVAL still applies as given).
        let interval = Store.Options().snapshotInterval
        let periodic = ProcessInfo.processInfo.environment["HERALD_SNAPSHOT_INTERVAL"] != nil
        let target = try store.openForWriting { if !periodic { $0.snapshotInterval = 0 } }
        var reader = try LineReader(path: input)
        defer { reader.close() }
        let inputName = reader.name
        var session = IngestSession(
            store: target,
            configuration: .init(
                decoder: try payload.decoder(store: target), formatName: payload.formatName, input: inputName,
                allOrNothing: allOrNothing, batchSize: batchSize))
        let bar = ProgressBar(enabled: !quiet && Terminal.stderrIsTTY, label: "ingest")
        let summary = try session.ingest(&reader) { report in
            switch report {
            case .rejected(let rejection): Self.reject(rejection, input: inputName)
            case .committed(let seqs): if printSeqs { Terminal.line(seqs.map { "ack \($0)" }.joined(separator: "\n")) }
            case .progress(let appended, let bytesRead, let totalBytes):
                let fraction = totalBytes.map { Double(bytesRead) / Double(max($0, 1)) }
                bar.update("\(appended) events" + (totalBytes.map { ", \(bytesRead >> 20) of \($0 >> 20) MiB read" } ?? ""), fraction: fraction)
            }
        }
        bar.finish()
        // Periodic snapshots are written in the background: let the last one end before exit.
        target.snapshots.waitUntilIdle()
        if !periodic, interval > 0, target.lastSeq - (try target.snapshots.seqs().last ?? 0) >= interval {
            try target.snapshot()
        }
        if json {
            Terminal.line(Self.json(summary))
        } else if !quiet {
            Terminal.note(Self.describe(summary))
        }
        if summary.rejected > 0 {
            throw ExitCode(CLIFailure.rejected)
        }
    }

    /// Reports a rejected payload on stderr: `FILE:LINE: field: reason`, or with `--json`
    /// one object per payload, `{"rejected":{"input":…,"line":…,"reason":…}}`.
    static func reject(_ rejection: IngestSession.Rejection, input: String) {
        guard Terminal.jsonErrors else {
            Terminal.error("\(Formatting.escaped(input)):\(rejection.line): \(rejection.reason)")
            return
        }
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("rejected")
        writer.objectStart()
        writer.key("input"); writer.string(input)
        writer.key("line"); writer.int(rejection.line)
        writer.key("reason"); writer.string(rejection.reason)
        writer.objectEnd()
        writer.objectEnd()
        Terminal.write(writer.string + "\n", to: STDERR_FILENO)
    }

    /// `ingested N lines: N events appended (seq A…B), N rejected (quarantine #A…#B; …)`.
    static func describe(_ summary: IngestSession.Summary) -> String {
        let lines = summary.lines, appended = summary.appended
        var text = "ingested \(lines) line\(lines == 1 ? "" : "s"): \(appended) event\(appended == 1 ? "" : "s") appended"
        if let firstSeq = summary.firstSeq, let lastSeq = summary.lastSeq, appended > 0 { text += " (seq \(firstSeq)…\(lastSeq))" }
        text += ", \(summary.rejected) rejected"
        if let first = summary.quarantineIds.first, let last = summary.quarantineIds.last {
            text += " (quarantine \(first == last ? "#\(first)" : "#\(first)…#\(last)"); see `herald quarantine list`)"
        }
        return text
    }

    /// The summary's JSON form: `{"lines":…,"appended":…,"firstSeq":…,"lastSeq":…,
    /// "rejected":…,"quarantineIds":[…]}`.
    static func json(_ summary: IngestSession.Summary) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("lines"); writer.int(summary.lines)
        writer.key("appended"); writer.int(summary.appended)
        if let first = summary.firstSeq, summary.appended > 0 { writer.key("firstSeq"); writer.int(first) }
        if let last = summary.lastSeq, summary.appended > 0 { writer.key("lastSeq"); writer.int(last) }
        writer.key("rejected"); writer.int(summary.rejected)
        writer.key("quarantineIds"); writer.ints(summary.quarantineIds)
        writer.objectEnd()
        return writer.string
    }
}
