import Foundation
import HeraldProjection
import LMDB
import Logging

extension Store {
    /// How to open a store.
    public struct Options: Sendable {
        /// Open read-only: no writer lock is taken and nothing can be appended. Every write
        /// path of the store checks it and throws ``StoreError/Code/readOnly``. Beside other
        /// stores of this process on the same directory, it shares their LMDB environment
        /// (see ``Store``).
        public var readOnly = false
        /// Create the store when the directory holds none (writable opens only).
        public var create = true
        /// How commits reach the disk. The default, ``Store/Durability/full``,
        /// makes every append durable when it returns. ``Store/Durability/noSync``
        /// is several times faster for single appends, and a crash of the process still loses
        /// nothing, but a crash of the machine (power, kernel) can lose the appends since the
        /// last ``Store/sync()``.
        public var durability: Durability = .full
        /// The initial LMDB map size; the map grows by itself when it fills up.
        public var initialMapSize = 64 << 20
        /// How the projection is configured (what-if overrides of the view options).
        public var projection = Projection.Configuration()
        /// Rebuild the projection at open. A damaged record then makes the open fail with
        /// ``StoreError/Code/damagedRecord``; turn it off to inspect such a store
        /// (`herald verify` does) with the projection left empty. Appends then apply to the
        /// empty projection, and no snapshot is taken of it.
        public var replayOnOpen = true
        /// Take a snapshot automatically every this many events (0: never). The commit that
        /// crosses the interval copies the state (O(1)); the store encodes and writes it on a
        /// background queue, so no append waits for it. While one is in flight no other
        /// starts: the next is taken at the first commit after it ends. See
        /// ``Snapshots/waitUntilIdle()``.
        public var snapshotInterval: UInt64 = 250_000
        /// How many snapshots to keep (the newest ones; the compaction base is kept besides).
        public var snapshotsToKeep = 3
        /// Besides the newest ``snapshotsToKeep``, keep the oldest snapshot of every run of
        /// this many seqs (0: none), so that a snapshot lies at most about this far before any
        /// point of history: an audit of one target or a `state --at` of one account with the
        /// audit index (``AuditIndex/catchUp(starting:)``) restores the account from the snapshot
        /// before the point and replays only the account's events since. With the default
        /// interval a 10 M-event store keeps ten more snapshots.
        public var snapshotSpacing: UInt64 = 1_000_000
        /// Open from the newest valid snapshot plus the log after it. When false, the open
        /// replays the whole history (the archive too, when it holds it); a store compacted
        /// without an archive has no log before its base snapshot, so that open still starts
        /// from the base snapshot. Snapshots are also ignored whenever ``projection``
        /// overrides group limits, as they were taken without.
        public var useSnapshots = true
        /// Walk every B-tree page of `data.mdb` (and of `archive/data.mdb`) before LMDB
        /// reads it, so that a damaged file is reported instead of crashing the process (see
        /// `LMDB.DataFile`): LMDB follows page numbers blindly. Read-only opens always do, and
        /// so do the `herald` CLI's writable opens, compaction and purge. Otherwise (an
        /// application's own store, which its process wrote, reopened at start-up) a writable
        /// open checks the meta pages and the file's size only, and walks when the file is
        /// shorter than its newest meta page says: the walk reads every page in use once
        /// (about 60 ms for a 1 M-event, 130 MB store), too slow for the restart target.
        public var checksPages = false
        /// A directory where those walks remember a clean verdict for the unchanged file
        /// (`Environment.Options.walkVerdicts`): a reading command run again on the same copied
        /// store skips the walk. `nil` (the default): every open walks. The `herald` CLI's
        /// reading commands use `$HERALD_CACHE_DIR`, else `$XDG_CACHE_HOME/herald`, else
        /// `~/.cache/herald`; `herald verify` always walks.
        public var walkVerdicts: String?
        /// With ``readOnly``: open without LMDB's lock file (`MDB_NOLOCK`), so that reading
        /// changes no byte and creates no file in the store directory. Only while no process
        /// writes the store: hold ``WriterLock/shared(directory:)`` meanwhile (`herald console`).
        package var withoutLockFile = false
        /// Let the audit index answer what it can (``Store/auditReport(account:target:listingUnchanged:)``,
        /// ``Store/projection(at:account:useSnapshots:)``). False: always replay, as
        /// `herald audit --no-index` does to check an answer without trusting the index.
        public var usesAuditIndex = true
        /// The most bytes the quarantine may occupy (its LMDB pages); past it, each
        /// ``Quarantine/add(_:)`` drops the oldest entries, in the same commit, until it
        /// fits again (never the entries it adds). `nil` (the default): no limit.
        public var quarantineLimitBytes: Int?
        /// The clock that stamps records, in milliseconds since the Unix epoch.
        public var clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
        /// The replicated log its commits go to first (`herald serve --replicated-log`): see
        /// `LogReplication`. `nil` (the default): the LMDB log is the only one.
        package var replication: (any LogReplication)?
        /// Where the store logs what it does (snapshots skipped, maps grown, recovery).
        public var logger = Logger(label: "herald.store", factory: { _ in SwiftLogNoOpLogHandler() })

        /// Tests only: called in every log write transaction after its records are put; what
        /// it throws fails the commit, as a failing disk would.
        package var commitFault: (@Sendable () throws -> Void)?
        /// Tests only: called on the background queue before each automatic snapshot is
        /// encoded, with its seq; it may block, to hold the snapshot in flight, or throw, to
        /// fail it as a failing disk would.
        package var automaticSnapshotFault: (@Sendable (UInt64) throws -> Void)?
        /// Tests only: called by archive retention after each durable step; what it throws
        /// stops the run there, as a crash would.
        package var retentionFault: (@Sendable (RetentionStep) throws -> Void)?

        /// The default options: writable, created when missing, fully durable.
        public init() {}
    }
}

extension Store {
    /// How a commit reaches the disk.
    ///
    /// A setting of the store's whole LMDB environment, so the writable stores of this
    /// process that share one get the strongest any of them asked for.
    public enum Durability: Sendable, Hashable {
        /// fsync at every commit: a crash of the process or of the machine loses nothing
        /// that was committed. The default.
        case full
        /// The meta page is flushed one commit late (LMDB's `MDB_NOMETASYNC`). A machine
        /// crash can undo the last commit; a process crash loses nothing.
        case noMetaSync
        /// No fsync; the OS writes when it likes (LMDB's `MDB_NOSYNC`). A machine crash can
        /// lose every commit since the last ``Store/sync()`` (LMDB keeps its B-tree
        /// consistent, so nothing is corrupted); a process crash loses nothing.
        case noSync

        /// The LMDB setting.
        var environmentDurability: Environment.Durability {
            switch self {
            case .full: .full
            case .noMetaSync: .noMetaSync
            case .noSync: .noSync
            }
        }
    }
}
