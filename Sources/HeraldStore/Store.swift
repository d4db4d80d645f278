// HeraldStore owns Herald's data on disk: the append-only event log in LMDB, the projection
// kept in step with it, snapshots, compaction, purge and recovery. It is the shell around the
// pure projection: it does the I/O, the projection does the thinking.

import Foundation
import Synchronization
import HeraldEvents
import HeraldProjection
import LMDB
import Logging

/// A Herald store: one directory holding an LMDB environment with the event log.
///
/// Open it with ``init(path:options:)``; append with `append(_:source:)` or
/// `append(contentsOf:)`; read records through ``history``. One process at a time may
/// open a store for writing; any number may open it read-only and see committed events.
///
/// In one process, a store may be open several times: one writable and any number of
/// read-only stores on the same directory (however its path is spelled). They share one
/// LMDB environment, as LMDB allows a database to be open only once per process (see
/// `LMDB.Environment.init(path:options:)`), so each sees the others' commits as soon as they
/// are made, and releasing one leaves the others, and the locks other processes rely on,
/// intact. Open the writable one first, or at least not while a read-only one is open on
/// files this process could not open for writing: that open fails with
/// a ``StoreError`` with code ``StoreError/Code/lmdb``, naming the path.
public final class Store: Sendable {
    /// The store directory.
    public let path: String
    /// The options it was opened with.
    public let options: Options
    let environment: Environment
    let databases: Databases
    let logger: Logger
    private let writerLock: WriterLock?
    /// Whether ``close()`` releases `writerLock`: not when the caller lent it (compaction and
    /// purge hold theirs across closing and reopening).
    private let ownsWriterLock: Bool
    /// The write path: the commit thread and the apply thread (started for writable stores
    /// only).
    let appendThreads: AppendThreads
    /// What the store keeps in memory; the write path changes it after each commit.
    let state: StateCell
    /// The followers of ``appliedEvents()``, handed events with `state` locked.
    let followers = Followers()
    /// Encodes and writes the snapshots, the automatic ones in the background.
    let snapshotWriter: SnapshotWriter
    /// Auxiliary database handles opened so far (see ``AuxiliaryHandles``).
    let auxiliaryHandles = AuxiliaryHandles()
    /// The readable history: the archive's records, then the log's, and where it starts and
    /// ends.
    public let history: StoreHistory
    /// Whether ``close()`` was called; read by every append, so an atomic, not a lock.
    let closedFlag = Atomic(false)
    /// Where the `async` API runs its blocking calls (log reads, snapshots): threads of the
    /// store's own, never the cooperative pool of Swift concurrency. (Appends do not block:
    /// their callers suspend until the apply thread answers them.)
    let blockingQueue = DispatchQueue(label: "herald.store.blocking", attributes: .concurrent)

    /// The named LMDB databases of a store.
    struct Databases: Sendable {
        /// seq (8 bytes BE) → log record.
        var log: Database
        /// name → value: format version and store-wide facts.
        var meta: Database
    }

    /// The value of the `format` meta key of stores this build writes.
    static let formatTag = "herald-store 1"

    /// Opens the store in directory `path`, creating it when it does not exist and the options
    /// allow writing.
    public convenience init(path: String, options: Options = Options()) throws {
        try self.init(path: path, options: options, lock: nil)
    }

    /// Opens the store; a writable open uses `lock` when the caller already holds the writer
    /// lock (compaction and purge keep it across closing and reopening), else takes it.
    init(path: String, options: Options, lock: WriterLock?) throws {
        self.path = path
        self.options = options
        self.logger = options.logger
        let fileManager = FileManager.default
        let dataFile = path + "/data.mdb"
        if options.readOnly {
            guard fileManager.fileExists(atPath: dataFile) else { throw StoreError.notFound(path: path) }
            writerLock = nil
            ownsWriterLock = false
        } else {
            if !fileManager.fileExists(atPath: dataFile) && !options.create {
                throw StoreError.notFound(path: path)
            }
            try Self.refuseRemnants(path)
            try FileSystem.makeDirectories(path)
            writerLock = try lock ?? WriterLock(directory: path)
            ownsWriterLock = lock == nil
            try Self.removeCompactionLeftovers(path)
        }
        var environmentOptions = Environment.Options()
        environmentOptions.mapSize = options.initialMapSize
        environmentOptions.readOnly = options.readOnly
        environmentOptions.withoutLockFile = options.readOnly && options.withoutLockFile
        environmentOptions.durability = options.durability.environmentDurability
        environmentOptions.pageCheck = options.readOnly || options.checksPages ? .always : .whenSuspicious
        environmentOptions.walkVerdicts = options.walkVerdicts
        do {
            environment = try Environment(path: path, options: environmentOptions)
            databases = try Self.openDatabases(environment, create: !options.readOnly, path: path)
        } catch let error as LMDBError {
            throw StoreError.lmdb(error)
        }
        history = StoreHistory(
            path: path, options: options, environment: environment, log: databases.log, meta: databases.meta,
            auxiliaryHandles: auxiliaryHandles, blockingQueue: blockingQueue)
        snapshotWriter = SnapshotWriter(
            environment: environment, handles: auxiliaryHandles, meta: databases.meta, path: path, options: options)
        state = StateCell(State(configuration: options.projection))
        appendThreads = AppendThreads(
            AppendEngine(
                path: path, options: options, environment: environment, log: databases.log, state: state,
                followers: followers, snapshotWriter: snapshotWriter,
                snapshotsFitConfiguration: options.projection.groupCountMaxOverride == nil
                    && options.projection.groupSizeMaxOverride == nil))
        try checkFormat()
        if !options.readOnly, try archiveIsLeftover() {
            logger.warning("removing the archive an interrupted compaction left", metadata: ["path": "\(path)"])
            try FileSystem.remove(path + "/" + Archive.directoryName)
        }
        if options.replayOnOpen {
            try recover()
        } else {
            let last = (try? history.bounds().highWaterSeq) ?? 0
            state.withLock { state in
                state.lastSeq = last
                state.holdsHistory = false
            }
        }
        if !options.readOnly { appendThreads.start() }
        logger.debug("opened store", metadata: ["path": "\(path)", "readOnly": "\(options.readOnly)"])
    }

    /// Closes the store: fails the appends still queued with ``StoreError/Code/closed``
    /// (the commit in flight, if any, finishes and is applied), stops the commit and apply
    /// threads and waits for them, ends every ``appliedEvents()`` stream (after the events each
    /// buffered), waits for the automatic snapshot in flight, then releases the LMDB
    /// environment and the writer lock: the directory can be opened again at once, here or
    /// in another process. Later appends, writes and log reads throw
    /// ``StoreError/Code/closed``; the in-memory state stays readable. Idempotent.
    public func close() {
        stop()
        history.releaseArchive()
        environment.release()
    }

    /// A store its users let go of stops as ``close()`` does (no caller waits: each holds the
    /// store until answered). Its environment goes with the last of its parts a caller still
    /// holds (`try Store(path: p).history.records()` reads through a temporary store).
    deinit { stop() }

    /// What ``close()`` and the deinit share: refuses later appends, stops the write path,
    /// lets the automatic snapshot in flight finish, ends the followers and releases the
    /// writer lock. Idempotent.
    private func stop() {
        let first = closedFlag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        guard first else { return }
        appendThreads.stop(closed: StoreError.closed(path: path))
        snapshotWriter.waitUntilIdle()
        state.withLock { _ in followers.finishAll() }
        if ownsWriterLock { writerLock?.release() }
    }

    private static func openDatabases(_ environment: Environment, create: Bool, path: String) throws -> Databases {
        func open(_ name: String) throws -> Database {
            guard let database = try environment.openDatabase(name, create: create) else {
                throw StoreError.unsupportedFormat(path: path, found: "no `\(name)` database")
            }
            return database
        }
        return Databases(log: try open("log"), meta: try open("meta"))
    }

    private func checkFormat() throws {
        let key = Array("format".utf8)
        let found = try environment.storeRead { txn in try txn.get(databases.meta, key: key) }
        if let found {
            let tag = String(decoding: found, as: UTF8.self)
            guard tag == Self.formatTag else { throw StoreError.unsupportedFormat(path: path, found: tag) }
        } else if !options.readOnly {
            try environment.storeWrite { txn in try txn.put(databases.meta, key: key, value: Array(Self.formatTag.utf8)) }
        }
    }
}

extension Store {
    /// Refuses a writable open that would start a new log over what is left of a store: an
    /// empty `data.mdb` (a store cut short, or one whose creation was interrupted), or a
    /// missing one beside `archive/`, LMDB's `lock.mdb` or the writer lock's `herald.lock`
    /// (each written only once a store was opened for writing in the directory).
    static func refuseRemnants(_ path: String) throws {
        let dataFile = path + "/data.mdb"
        let exists = FileSystem.exists(dataFile)
        if exists && FileSystem.size(dataFile) == 0 {
            throw StoreError.remnants(path: path, reason: "data.mdb is empty (0 bytes): the store was cut short or its creation interrupted")
        }
        guard !exists else { return }
        if FileSystem.exists(path + "/" + Archive.directoryName) {
            throw StoreError.remnants(path: path, reason: "data.mdb is missing but archive/ is there (its history's first part)")
        }
        if FileSystem.exists(path + "/lock.mdb") {
            throw StoreError.remnants(path: path, reason: "data.mdb is missing but LMDB's lock.mdb is there: the data file was lost")
        }
        if FileSystem.exists(path + "/" + WriterLock.fileName) {
            // Taken just before the data file is created: a store was opened for writing here
            // (only a first open that failed in between leaves it alone; then removing
            // herald.lock is safe, as the message's "move the directory aside" is).
            throw StoreError.remnants(
                path: path, reason: "data.mdb and LMDB's lock.mdb are missing but herald.lock is there: a store was opened for writing here and its files were lost")
        }
    }
}
