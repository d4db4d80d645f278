import Foundation
import HeraldEvents

/// What ``StoreMaintenance/backup(to:)`` wrote, and the check of the copy.
public struct BackupReport: Sendable, CustomStringConvertible {
    /// The backup directory.
    public var destination: String
    /// The LMDB environments copied, as directories relative to the store (`.` for the
    /// store's own, `archive`, `serve`…), in the order copied.
    public var environments: [String] = []
    /// The other files copied (archive retention's exports), relative to the store.
    public var files: [String] = []
    /// Bytes written, over every file of the backup.
    public var bytes = 0
    /// The first seq of the kept history in the copy (`origin` + 1).
    public var firstSeq: UInt64 = 1
    /// The highest seq given out in the copy: the backup holds the store as it was then.
    public var lastSeq: UInt64 = 0
    /// How many times the log and archive were copied: more than once when the archive
    /// changed during a copy (a compaction, purge or retention run).
    public var attempts = 0
    /// Seconds the backup took, the check included.
    public var seconds = 0.0
    /// The ``Store/verify(checkingSnapshots:progress:)`` report of the copy (always clean:
    /// a copy that fails it is not kept).
    public var verify = VerifyReport()

    /// The report as one JSON object: `destination`, `bytes`, `firstSeq`, `lastSeq`,
    /// `seconds`, `attempts`, `environments`, `files` and `verify` (`clean`,
    /// `recordsChecked`, `archivedRecordsChecked`, `snapshotsChecked`).
    package var json: String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("destination"); writer.string(destination)
        writer.key("bytes"); writer.int(bytes)
        writer.key("firstSeq"); writer.int(firstSeq)
        writer.key("lastSeq"); writer.int(lastSeq)
        writer.key("seconds"); writer.raw(String(format: "%.3f", seconds).utf8)
        writer.key("attempts"); writer.int(attempts)
        writer.key("environments")
        writer.arrayStart()
        for environment in environments { writer.string(environment) }
        writer.arrayEnd()
        writer.key("files")
        writer.arrayStart()
        for file in files { writer.string(file) }
        writer.arrayEnd()
        writer.key("verify")
        writer.objectStart()
        writer.key("clean"); writer.bool(verify.isClean)
        writer.key("recordsChecked"); writer.int(verify.recordsChecked)
        writer.key("archivedRecordsChecked"); writer.int(verify.archivedRecordsChecked)
        writer.key("snapshotsChecked"); writer.int(verify.snapshotsChecked)
        writer.objectEnd()
        writer.objectEnd()
        return writer.string
    }

    /// One line: where, how many bytes, which seqs, how long, and the check.
    public var description: String {
        let seqs = lastSeq >= firstSeq ? "seqs \(firstSeq)…\(lastSeq)" : "no records"
        return "backup written to \(destination): \(bytes) bytes, \(seqs), \(String(format: "%.2f", seconds)) s; verify: \(verify)"
    }
}
