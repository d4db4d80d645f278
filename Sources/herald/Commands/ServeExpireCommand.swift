import ArgumentParser
import HeraldEvents
import HeraldServer
import HeraldStore

/// `herald serve expire-archive`: archive retention by hand (what a serving `herald serve`
/// does after each scheduled compaction): export the expired archived range, then remove it.
struct ServeExpireCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expire-archive",
        abstract: "Export archived history past an age or size limit to gzip JSONL, then remove it from the store.",
        discussion: """
            Archived records (those compaction moved out of the log) recorded longer ago than
            --max-age-seconds, or beyond the newest --max-bytes of archived records, expire,
            oldest first. They are written, as `herald export` lines, to
            EXPORT-DIR/herald-archive-FIRST-LAST.jsonl.gz and fsynced; then the kept history
            starts after them (a snapshot stands for them) and they are removed from the
            archive. Audit, replay and state --at before that point name the export file;
            `zcat EXPORT-DIR/*.jsonl.gz | herald import --store NEW -` rebuilds it.

            It asks for confirmation on a terminal; scripts pass --yes. --dry-run prints what
            would expire and changes nothing. Needs the writer lock: with a server running,
            use POST /v1/admin/expire-archive instead.

            Example:
              herald serve expire-archive --store ./herald.db --max-age-seconds 2592000 --dry-run
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "Archived records recorded longer ago than this expire.")
    var maxAgeSeconds: Int64?

    @Option(name: .long, help: "Archived records beyond the newest this many stored bytes expire.")
    var maxBytes: Int?

    @Option(name: .long, help: ArgumentHelp("Where the export goes (default STORE/archive-exports).", valueName: "DIR"))
    var exportDirectory: String?

    @Flag(name: .long, help: "Print what would expire; change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "Do not ask for confirmation.")
    var yes = false

    @Flag(name: .long, help: "Print the report as one JSON object.")
    var json = false

    func validate() throws {
        guard maxAgeSeconds != nil || maxBytes != nil else { throw ValidationError("give --max-age-seconds, --max-bytes or both") }
    }

    func run() throws {
        let retention = ArchiveRetention(
            maxAgeSeconds: maxAgeSeconds, maxBytes: maxBytes,
            exportDirectory: exportDirectory ?? store.path + "/" + ServerConfiguration.defaultExportDirectory)
        let plan = try StoreMaintenance(path: store.path).expireArchive(retention: retention, dryRun: true)
        if dryRun || plan.expiredRange == nil {
            Terminal.line(json ? Self.json(plan) : Self.describe(plan, retention))
            return
        }
        try Terminal.confirm(
            "Export seqs \(plan.previousOrigin + 1)…\(plan.origin) (\(plan.recordsExpired) archived records) to "
                + "\(retention.exportDirectory), then remove them from \(store.path)?",
            yes: yes)
        let report = try StoreMaintenance(path: store.path).expireArchive(retention: retention)
        Terminal.line(json ? Self.json(report) : Self.describe(report, retention))
    }

    static func describe(_ report: RetentionReport, _ retention: ArchiveRetention) -> String {
        let prefix = report.dryRun ? "dry run: " : ""
        guard let range = report.expiredRange else {
            return prefix + "nothing expired (\(report.archiveBytesBefore) bytes of archived records kept)"
        }
        let verb = report.dryRun ? "would be exported to \(retention.exportDirectory) and removed" : "exported to \(report.exportFile ?? "") and removed"
        return prefix + "seqs \(range.lowerBound)…\(range.upperBound) (\(report.recordsExpired) records) \(verb); "
            + "archived records \(report.archiveBytesBefore) → \(report.archiveBytesAfter) bytes"
    }

    static func json(_ report: RetentionReport) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("dryRun"); writer.bool(report.dryRun)
        writer.key("previousOrigin"); writer.int(report.previousOrigin)
        writer.key("origin"); writer.int(report.origin)
        writer.key("recordsExpired"); writer.int(report.recordsExpired)
        writer.key("archiveBytesBefore"); writer.int(report.archiveBytesBefore)
        writer.key("archiveBytesAfter"); writer.int(report.archiveBytesAfter)
        if let file = report.exportFile {
            writer.key("exportFile"); writer.string(file)
            writer.key("exportFileBytes"); writer.int(report.exportFileBytes)
        }
        writer.objectEnd()
        return writer.string
    }
}
