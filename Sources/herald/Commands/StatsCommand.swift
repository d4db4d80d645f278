import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald stats`: what is in a store.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count events by type, account and source format; show log size, map use, snapshots, the audit index and quarantine.",
        discussion: "Example:\n  herald stats --store ./herald.db --json"
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let source = try store.openForReading { $0.replayOnOpen = false }
        let stats = try source.statistics()
        if json {
            Terminal.line(Self.json(stats))
            return
        }
        func mib(_ bytes: Int) -> String { String(format: "%.2f MiB", Double(bytes) / 1_048_576) }
        var lines = [Terminal.styled("store \(source.path)", .bold)]
        lines.append("records      \(stats.records)" + (stats.firstSeq.map { " (seq \($0)…\(stats.lastSeq))" } ?? ""))
        lines.append("log          \(mib(stats.logBytes)) of keys and values, \(stats.records == 0 ? 0 : stats.logBytes / stats.records) B per record")
        lines.append("data file    \(mib(stats.fileBytes)); map \(mib(stats.mapBytes)), \(mib(stats.usedBytes)) in use")
        lines.append("snapshots    " + (stats.snapshotSeqs.isEmpty ? "none" : stats.snapshotSeqs.map { "seq \($0) (\(stats.lastSeq - min($0, stats.lastSeq)) events behind)" }.joined(separator: ", ")))
        if let index = stats.auditIndex {
            let lag = stats.lastSeq > index.through ? stats.lastSeq - index.through : 0
            let behind = lag == 0 ? "current" : "\(lag) seq\(lag == 1 ? "" : "s") behind the log; reading commands replay past it"
            lines.append("audit index  through seq \(index.through) (\(behind)), \(mib(index.bytes)); \(index.buckets) buckets, \(index.seqChunks) chunks of account seqs")
        } else {
            lines.append("audit index  none (`herald index` builds one)")
        }
        lines.append("quarantine   \(stats.quarantined) payload\(stats.quarantined == 1 ? "" : "s") (\(stats.quarantineBytes) B)")
        for (title, counts) in stats.countTables where !counts.isEmpty {
            var table = Table(title, "events")
            // Most events first, then by name in byte order.
            let ordered = counts.sorted { $0.count != $1.count ? $0.count > $1.count : NameKey($0.name) < NameKey($1.name) }
            for (name, count) in ordered { table.add(name, "\(count)") }
            lines.append("")
            lines.append(table.rendered)
        }
        Terminal.line(lines.joined(separator: "\n"))
    }

    static func json(_ stats: Store.Statistics) -> String { stats.jsonString }
}
