import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald salvage`: copy what still checks out of a damaged store into a new one.
struct SalvageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "salvage",
        abstract: "Copy every record and snapshot of a damaged store that still checks out into a new store.",
        discussion: """
            Reads the damaged store's files page by page, without trusting LMDB's pointers
            (it never crashes on a broken file): the newest commit, the one before it, and
            every intact page. Each record must pass its checksum. Prints exactly which seqs
            were lost; the new store records them as gaps, so it opens and verifies, and
            its state starts from the newest intact snapshot after the last loss (exact)
            when there is one. Exits 2 when anything was lost, 0 when nothing was.

            Example:
              herald salvage --store /tmp/case-4711 --to /tmp/case-4711-salvaged
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The new store to write (must not exist yet).", valueName: "DIR"))
    var to: String

    @Flag(name: .long, help: "Print the report as one JSON object.")
    var json = false

    func run() throws {
        let report = try StoreMaintenance(path: store.path).salvage(to: to)
        let lost = report.lostSeqs.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }
        if json {
            let object: JSONValue = .object([
                "recordsCopied": .int(report.recordsCopied), "archivedRecordsCopied": .int(report.archivedRecordsCopied),
                "lostSeqs": .array(report.lostSeqs.map { .array([.int($0.lowerBound), .int($0.upperBound)]) }),
                "lostCount": .int(report.lostCount), "snapshotsCopied": .array(report.snapshotsCopied.map { .int($0) }),
                "snapshotsDropped": .array(report.snapshotsDropped.map { .int($0) }), "keysCopied": .int(report.keysCopied),
                "quarantineCopied": .int(report.quarantineCopied), "damage": .array(report.damage.map { .string($0) }),
                "highWater": .int(report.highWater), "endUncertain": .bool(report.endUncertain),
                "stateFromSnapshot": report.stateFromSnapshot.map { .int($0) } ?? .null,
            ])
            Terminal.line(String(decoding: object.bytes, as: UTF8.self))
        } else {
            for damage in report.damage { Terminal.line("damage: \(damage)") }
            Terminal.line(
                "copied \(report.recordsCopied) records (\(report.archivedRecordsCopied) from the archive), "
                    + "\(report.snapshotsCopied.count) snapshots, \(report.keysCopied) keys, "
                    + "\(report.quarantineCopied) quarantine entries into \(to)")
            if !report.snapshotsDropped.isEmpty {
                Terminal.line("damaged snapshots left out: seq \(report.snapshotsDropped.map(String.init).joined(separator: ", "))")
            }
            if lost.isEmpty {
                Terminal.line("no seq lost in 1…\(report.highWater)")
            } else {
                Terminal.line("lost \(report.lostCount) seqs: \(lost.joined(separator: ", "))")
            }
            if report.endUncertain {
                Terminal.line(
                    "the newest commit could not be read whole: seqs after \(report.highWater) may have been lost too, "
                        + "unseen (compare with the last seq the application acknowledged)")
            }
            if let seq = report.stateFromSnapshot {
                Terminal.line("state: from the snapshot at seq \(seq) and the records after it (exact)")
            } else if !lost.isEmpty {
                Terminal.line("state: replayed over the lost seqs, so it may differ from the original (no intact snapshot after the last loss)")
            }
        }
        if !report.lostSeqs.isEmpty || !report.damage.isEmpty || report.endUncertain { throw ExitCode(CLIFailure.dataProblem) }
    }
}
