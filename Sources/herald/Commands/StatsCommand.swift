import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald stats`: what is in a store.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count events by type, account and source format; show log size, map use, snapshots and quarantine.",
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
        lines.append("quarantine   \(stats.quarantined) payload\(stats.quarantined == 1 ? "" : "s") (\(stats.quarantineBytes) B)")
        for (title, counts) in [("type", stats.byType), ("account", stats.byAccount), ("source", stats.bySource)] where !counts.isEmpty {
            var table = Table(title, "events")
            for (name, count) in counts.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) { table.add(name, "\(count)") }
            lines.append("")
            lines.append(table.rendered)
        }
        Terminal.line(lines.joined(separator: "\n"))
    }

    static func json(_ stats: Store.Statistics) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("records"); writer.int(stats.records)
        if let first = stats.firstSeq { writer.key("firstSeq"); writer.int(first) }
        writer.key("lastSeq"); writer.int(stats.lastSeq)
        writer.key("logBytes"); writer.int(stats.logBytes)
        writer.key("fileBytes"); writer.int(stats.fileBytes)
        writer.key("mapBytes"); writer.int(stats.mapBytes)
        writer.key("usedBytes"); writer.int(stats.usedBytes)
        writer.key("snapshotSeqs"); writer.ints(stats.snapshotSeqs)
        writer.key("quarantined"); writer.int(stats.quarantined)
        writer.key("quarantineBytes"); writer.int(stats.quarantineBytes)
        for (name, counts) in [("byType", stats.byType), ("byAccount", stats.byAccount), ("bySource", stats.bySource)] {
            writer.key(name)
            writer.objectStart()
            for (key, count) in counts.sorted(by: { $0.key < $1.key }) { writer.key(key); writer.int(count) }
            writer.objectEnd()
        }
        writer.objectEnd()
        return writer.string
    }
}
