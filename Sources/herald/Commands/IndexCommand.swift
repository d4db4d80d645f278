import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald index`: bring the audit index up to the log, or rebuild it.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Bring the audit index up to the log (or rebuild it), so audits and state --at of one account read only what they need.",
        discussion: """
            The audit index keeps, for every object, chat, notification and group, the first
            and last seq that changed it, and each account's seqs. A store has one once this
            command built it; from then on herald ingest and herald import bring it up to date
            when they end (about 8 µs per record), and herald serve after each maintenance pass. With it, `herald audit` (without --all) restores the
            account from the snapshot before the target's first change and replays only the
            account's events up to its last one, and `herald state --at SEQ --account A`
            replays only A's events after the snapshot before SEQ. Reading commands use it
            only when it covers the whole log; otherwise they replay, as without it. It also
            writes the spaced snapshots those reads start from (one per million seqs) where
            the history has none. A store whose history was discarded or expired keeps no
            index. Layout: schema/log-format.md, "The audit index".

            Examples:
              herald index --store ./herald.db
              herald index --store ./herald.db --rebuild
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Drop the index and build it again from the whole history.")
    var rebuild = false

    @Flag(name: .long, help: "Print {\"through\":…,\"buckets\":…,\"seqChunks\":…,\"bytes\":…,\"milliseconds\":…} instead of a sentence.")
    var json = false

    func run() throws {
        let target = try store.openForWriting(create: false) { $0.replayOnOpen = false }
        if let dropped = try target.history.bounds().droppedThrough {
            throw CLIFailure(
                exitCode: CLIFailure.usage,
                "store \(target.path) keeps no audit index: its history before seq \(dropped) \(try target.droppedHistoryExplanation()), so audits start from that snapshot")
        }
        let started = Date()
        if rebuild { try target.auditIndex.drop() }
        try target.auditIndex.catchUp(starting: true)
        let seconds = Date().timeIntervalSince(started)
        let statistics = try target.auditIndex.statistics()
        if json {
            var writer = JSONWriter()
            writer.objectStart()
            statistics.writeJSONFields(to: &writer)
            writer.key("milliseconds"); writer.int(Int((seconds * 1000).rounded()))
            writer.objectEnd()
            Terminal.line(writer.string)
            return
        }
        let records = try target.history.bounds().recordCountInLog
        let perEvent = records > 0 ? String(format: "%.1f", Double(statistics.bytes) / Double(records)) : "0"
        Terminal.line(
            "audit index of \(target.path) covers seqs 1…\(statistics.through): \(statistics.buckets) buckets of target windows, \(statistics.seqChunks) seq chunks, "
                + String(format: "%.2f MiB (%@ B per record)", Double(statistics.bytes) / 1_048_576, perEvent)
                + String(format: "; %.2f s", seconds))
    }
}
