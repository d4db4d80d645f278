import Foundation
import LMDB
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension StoreMaintenance {
    /// How often ``backup(to:)`` copies the log and archive again when the archive changed
    /// during a copy, before it gives up.
    static let backupAttempts = 5

    /// Writes a consistent, compacted copy of everything the store holds into the new
    /// directory `destination`, while writers (in this process or others) go on.
    ///
    /// Every LMDB environment of the store (the store's own, `archive/`, and any other, such
    /// as `herald serve`'s `serve/` tables) is copied with LMDB's compacting copy
    /// (`mdb_env_copyfd2` with `MDB_CP_COMPACT`, into a file created 0600), one read
    /// transaction each; other files (archive retention's exports in
    /// `archive-exports/`) are copied as they are; lock files and leftovers of interrupted
    /// runs are not. Files are written 0600, directories 0700.
    ///
    /// The log and the archive must agree on the kept history: compaction adds records to the
    /// archive before the log records it, and retention moves the log's `origin` before it
    /// deletes archived records, so each instant's pair is valid, but copies of the two taken
    /// at different instants may not be (the archive short of what the log says it holds, or
    /// an origin the archive has already moved past). So the archive is copied first and the
    /// log last, and the pair is kept only if the archive committed nothing (and neither of
    /// the two data files was replaced) from the archive copy's start to the log copy's end:
    /// the archive copy is then the archive at the instant of the log copy, and the pair is
    /// the store at that instant. Otherwise both are copied again (archive writes are rare:
    /// compaction, purge, retention). Export files are copied after the log, so every export
    /// the copied log records is there (an export is written before the log records it).
    ///
    /// The copy is written to a hidden sibling of `destination`, checked with
    /// ``Store/verify(checkingSnapshots:progress:)``, and renamed to `destination` only when
    /// clean. Logs to the logger of ``options``.
    ///
    /// - Parameter destination: the backup directory: new, or an empty directory, outside
    ///   the store. Throws ``StoreError/Code/backupRefused`` when it exists
    ///   and is not an empty directory, or when the copy fails its check; nothing is left behind.
    /// - Returns: what was copied, the copy's seq range and its check.
    public func backup(to destination: String) throws -> BackupReport {
        try backup(to: destination, betweenCopies: { _ in })
    }

    /// ``backup(to:)``, calling `betweenCopies` with the attempt number after the archive's
    /// copy and before the log's (tests change the store there).
    func backup(to destination: String, betweenCopies: (Int) throws -> Void) throws -> BackupReport {
        let storePath = path
        let logger = options.logger
        let started = ContinuousClock.now
        guard FileSystem.exists(storePath + "/data.mdb") else { throw StoreError.notFound(path: storePath) }
        var destination = destination
        while destination.count > 1 && destination.hasSuffix("/") { destination.removeLast() }
        try Self.refuseBackupDestination(destination)
        let parent = FileSystem.directory(of: destination)
        try FileSystem.makeDirectories(parent)
        if let store = FileSystem.resolved(storePath), let resolvedParent = FileSystem.resolved(parent),
            resolvedParent == store || resolvedParent.hasPrefix(store + "/")
        {
            throw StoreError.backupRefused(destination: destination, reason: "it is inside the store; name a directory outside it")
        }
        let name = destination.split(separator: "/").last.map(String.init) ?? "backup"
        let temporary = parent + "/.\(name).backup-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        var report = BackupReport(destination: destination)
        do {
            try FileSystem.makeDirectory(temporary)
            let layout = BackupLayout(storePath: storePath)
            for directory in layout.directories { try FileSystem.makeDirectory(temporary + "/" + directory) }
            for environment in layout.otherEnvironments {
                try Self.copyEnvironment(storePath + "/" + environment, to: temporary + "/" + environment, maxDatabases: nil)
                report.environments.append(environment)
            }
            report.attempts = try Self.copyHistory(
                storePath: storePath, to: temporary, destination: destination, logger: logger, betweenCopies: betweenCopies)
            if FileSystem.exists(temporary + "/" + Archive.directoryName + "/data.mdb") {
                report.environments.append(Archive.directoryName)
            }
            report.environments.append(".")
            // After the log: every export the copied log records was renamed into place before.
            for file in layout.files where FileSystem.exists(storePath + "/" + file) {
                try FileSystem.copyFile(storePath + "/" + file, to: temporary + "/" + file)
                report.files.append(file)
            }
            try Self.checkBackup(temporary, destination: destination, into: &report)
            for directory in layout.directories.reversed() where FileSystem.exists(temporary + "/" + directory) {
                try FileSystem.sync(temporary + "/" + directory)
            }
            try FileSystem.sync(temporary)
            guard rename(temporary, destination) == 0 else {
                let code = errno
                if code == ENOTEMPTY || code == EEXIST || code == ENOTDIR {
                    throw StoreError.backupRefused(destination: destination, reason: "it was created meanwhile and is not empty")
                }
                throw StoreError.system(path: destination, operation: "rename", errno: code)
            }
            try FileSystem.sync(parent)
        } catch {
            try? FileSystem.remove(temporary)
            throw error
        }
        report.bytes = Self.totalBytes(in: destination)
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        logger.info(
            "backup written",
            metadata: [
                "store": "\(storePath)", "to": "\(destination)", "bytes": "\(report.bytes)",
                "lastSeq": "\(report.lastSeq)", "attempts": "\(report.attempts)",
            ])
        return report
    }

    /// Throws unless `destination` is missing or an empty directory.
    private static func refuseBackupDestination(_ destination: String) throws {
        switch FileSystem.kind(destination) {
        case nil: return
        case .directory:
            guard FileSystem.names(in: destination).isEmpty else {
                throw StoreError.backupRefused(
                    destination: destination, reason: "it exists and is not empty; name a new directory (or remove the old backup)")
            }
        case .file, .other:
            throw StoreError.backupRefused(destination: destination, reason: "it exists and is not a directory")
        }
    }

    /// Copies the archive (when there is one), then the log's environment, until the archive
    /// stayed unchanged from the start of its copy to the end of the log's (see
    /// ``backup(to:)``); returns the number of attempts.
    private static func copyHistory(
        storePath: String, to temporary: String, destination: String, logger: Logger, betweenCopies: (Int) throws -> Void
    ) throws -> Int {
        let archivePath = storePath + "/" + Archive.directoryName
        for attempt in 1 ... backupAttempts {
            let archiveFile = FileIdentity(path: archivePath + "/data.mdb")
            let logFile = FileIdentity(path: storePath + "/data.mdb")
            var archive: (environment: Environment, transactionId: Int)?
            if archiveFile != nil {
                try FileSystem.makeDirectory(temporary + "/" + Archive.directoryName)
                archive = try copyEnvironment(archivePath, to: temporary + "/" + Archive.directoryName, maxDatabases: 4)
            }
            try betweenCopies(attempt)
            _ = try copyEnvironment(storePath, to: temporary, maxDatabases: nil)
            let unchanged =
                (archive.map { $0.environment.info().lastTransactionId == $0.transactionId } ?? true)
                && FileIdentity(path: archivePath + "/data.mdb") == archiveFile
                && FileIdentity(path: storePath + "/data.mdb") == logFile
            if unchanged { return attempt }
            logger.info("the archive changed during the backup's copy; copying again", metadata: ["attempt": "\(attempt)"])
            try FileSystem.remove(temporary + "/data.mdb")
            try FileSystem.remove(temporary + "/" + Archive.directoryName + "/data.mdb")
        }
        throw StoreError.backupRefused(
            destination: destination,
            reason: "the archive changed during each of \(backupAttempts) copies (a compaction or retention run); try again later")
    }

    /// Opens the environment in `source` read-only, pages checked (the copy follows every
    /// page), and writes its compacting copy to `destination/data.mdb`; returns the
    /// environment (kept open, for the caller's check) and the transaction id it copied at.
    @discardableResult
    private static func copyEnvironment(
        _ source: String, to destination: String, maxDatabases: UInt32?
    ) throws -> (environment: Environment, transactionId: Int) {
        var options = Environment.Options()
        options.readOnly = true
        options.pageCheck = .always
        // An open asking for more named databases than this process opened it with fails.
        if let maxDatabases { options.maxDatabases = maxDatabases }
        do {
            let environment = try Environment(path: source, options: options)
            let transactionId = try environment.copy(toFile: destination + "/data.mdb", compact: true)
            return (environment, transactionId)
        } catch {
            throw StoreError.lmdb(error)
        }
    }

    /// Verifies the copy in `temporary`, fills in its seq range and check, then removes the
    /// lock files opening it left; throws when it is not clean.
    private static func checkBackup(_ temporary: String, destination: String, into report: inout BackupReport) throws {
        do {
            var options = Store.Options()
            options.readOnly = true
            options.create = false
            options.replayOnOpen = false
            let copy = try Store(path: temporary, options: options)
            // An archive an interrupted first `compact --archive` left holds nothing the
            // history needs (the next writable open of the store removes it): leave it out.
            if try copy.archiveIsLeftover() {
                try FileSystem.remove(temporary + "/" + Archive.directoryName)
                report.environments.removeAll { $0 == Archive.directoryName }
            }
            report.verify = try copy.verify()
            report.lastSeq = try copy.history.bounds().highWaterSeq
            report.firstSeq = try copy.history.facts().origin + 1
        }  // The copy's environments close here, before their lock files go.
        for environment in report.environments {
            try FileSystem.remove(temporary + "/" + environment + "/lock.mdb")
        }
        guard report.verify.isClean else {
            let problems = report.verify.problems.prefix(3).map(\.description).joined(separator: "; ")
            throw StoreError.backupRefused(
                destination: destination,
                reason: "the copy fails `herald verify` (\(report.verify.problems.count) problems: \(problems)); "
                    + "run `herald verify` on the store, and `herald salvage` if it is damaged")
        }
    }

    /// The bytes of every file under `directory`.
    private static func totalBytes(in directory: String) -> Int {
        FileSystem.names(in: directory).reduce(0) { total, name in
            let path = directory + "/" + name
            return total + (FileSystem.kind(path) == .directory ? totalBytes(in: path) : FileSystem.size(path))
        }
    }
}

/// What a store directory holds that a backup copies, found by walking it: every directory
/// with a `data.mdb` is an LMDB environment; other plain files are copied as they are; lock
/// files (`lock.mdb`, `herald.lock`), compaction's `compact.tmp/` and unfinished exports
/// (`.NAME.partial`) are left out, as are symbolic links and special files.
struct BackupLayout {
    /// Sub-directories to create, relative to the store, parents first.
    var directories: [String] = []
    /// Environments besides the store's own and the archive (`serve`), relative.
    var otherEnvironments: [String] = []
    /// Plain files, relative.
    var files: [String] = []

    init(storePath: String) {
        walk(storePath, relative: "")
    }

    private mutating func walk(_ path: String, relative: String) {
        for name in FileSystem.names(in: path) {
            let child = relative.isEmpty ? name : relative + "/" + name
            switch FileSystem.kind(path + "/" + name) {
            case .directory:
                guard name != Store.compactionDirectory else { continue }
                directories.append(child)
                if FileSystem.exists(path + "/" + name + "/data.mdb") && child != Archive.directoryName {
                    otherEnvironments.append(child)
                }
                walk(path + "/" + name, relative: child)
            case .file:
                let skipped = ["data.mdb", "lock.mdb", WriterLock.fileName]
                guard !skipped.contains(name), !(name.hasPrefix(".") && name.hasSuffix(".partial")) else { continue }
                files.append(child)
            case .other, nil:
                continue
            }
        }
    }
}
