import ArgumentParser
import HeraldEvents
import Foundation
import HeraldStore

/// `herald snapshot`: write a snapshot of the current state now.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Write a snapshot of the current state, so the next open replays only what follows.",
        discussion: """
            The store also takes one by itself every 250,000 events (herald ingest takes
            it once, at its end, when that many follow the newest snapshot) and keeps the
            newest three, and the oldest of each million seqs (after the first million), so
            that state --at and audits start near any point. Needs the writer lock: run it
            when no ingest is running.

            Example:
              herald snapshot --store ./herald.db
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Print {\"seq\":…,\"snapshots\":[…]} instead of a sentence.")
    var json = false

    func run() throws {
        let target = try store.openForWriting(create: false)
        let seq = try target.snapshot()
        let kept = try target.snapshots.seqs()
        if json {
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("seq"); writer.int(seq)
            writer.key("snapshots"); writer.ints(kept)
            writer.objectEnd()
            Terminal.line(writer.string)
            return
        }
        Terminal.line(
            "snapshot at seq \(seq); the store keeps \(kept.count) snapshot\(kept.count == 1 ? "" : "s"), at seq"
                + (kept.count == 1 ? " " : "s ") + kept.map(String.init).joined(separator: ", "))
    }
}
