import Foundation
import HeraldStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// A store's log replicated through PostgreSQL (`herald serve --replicated-log URL --log-id
/// ID`): PostgreSQL is the log's truth, the store's LMDB log a copy behind it
/// (`schema/replicated-log.md`).
///
/// - A **leader** owns the log id under an epoch it took at start (`herald_logs.epoch + 1`).
///   Each group commit of its store is one PostgreSQL statement (``commit(_:)``, called by
///   the store before its LMDB commit): the records with their seqs, inserted only while the
///   epoch is still the log's and the seqs follow the log's last. A node whose epoch was
///   taken over is fenced for good. A failed commit, or one whose outcome is unknown (the
///   connection broke; the server sent a notice, as PostgreSQL does when a commit's wait for
///   the synchronous standby is cancelled), is never acknowledged: writes are refused until
///   the replication thread has reconnected, run a barrier (a synchronous commit that
///   returns without a notice, so every earlier commit is on the standby) and read the log
///   back into the store.
/// - A **follower** (`--follow`) writes nothing: it applies the records others commit,
///   woken by `NOTIFY` and reading by seq, and records how far it got.
public final class ReplicatedLog: LogReplication {
    public enum Role: String, Sendable { case leader, follower }

    /// What the node may do now.
    public enum Status: Sendable, Equatable {
        /// Not started yet.
        case starting
        /// The leader accepts writes.
        case writable
        /// The leader refuses writes until the replication thread recovers (the reason).
        case recovering(String)
        /// Another node took the log over: no write ever again under this epoch.
        case fenced(String)
        /// A follower.
        case following
        case closed
    }

    public let address: LogAddress
    public let logId: String
    /// This node's name in `herald_logs.owner` and `herald_followers.node`.
    public let node: String
    public let role: Role
    let logger: Logger
    /// How long an owner stays live without a heartbeat: a start on a log id whose owner was
    /// heard from more recently is refused unless it takes over.
    public static let leaseSeconds = 10
    static let heartbeatSeconds = 2.0
    static let pageSize = 1000

    private let state = Mutex<(status: Status, epoch: Int64)>((.starting, 0))
    /// The connection of commits, heartbeats and barriers, one query at a time.
    let writer: LinkSlot
    /// The connection of catch-up reads and, for a follower, LISTEN.
    let reader: LinkSlot
    let wake = DispatchSemaphore(value: 0)
    /// Whether the reader connection LISTENs (a follower).
    let listenState = Mutex<Bool>(false)
    /// Whether the start seeded an empty log from the store (its service tables go too).
    let seeding = Mutex<Bool>(false)
    /// Whether the replication thread was started.
    private let threadStarted = Mutex<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// The store the replication thread catches up (it changes when compaction reopens it).
    private let storeSource = Mutex<(@Sendable () -> Store?)?>(nil)
    /// Called by a follower after each catch-up with the service entries (tokens, pushkeys…).
    private let serviceSink = Mutex<(@Sendable ([ServiceEntry]) -> Void)?>(nil)

    /// Connects to `address` and checks the schema and the log's owner; writes nothing.
    ///
    /// Throws a ``ReplicationError`` naming what and where: the URL, the connection, the
    /// credentials, a schema newer than this binary's, and (for a leader without
    /// `takeOver`) an owner heard from in the last ``leaseSeconds`` seconds.
    public init(address: LogAddress, logId: String, node: String, role: Role, takeOver: Bool, logger: Logger) throws {
        guard !logId.isEmpty, logId.utf8.count <= 200 else {
            throw ReplicationError(.badURL, "--log-id must be 1 to 200 bytes")
        }
        self.address = address
        self.logId = logId
        self.node = node
        self.role = role
        self.logger = logger
        writer = LinkSlot(address: address)
        reader = LinkSlot(address: address, recordingNotices: false)
        do {
            try check(takeOver: takeOver)
        } catch {
            // Nothing was written; the connection goes with the refusal.
            writer.close()
            reader.close()
            throw error
        }
    }

    /// The checks of ``init(address:logId:node:role:takeOver:logger:)``.
    private func check(takeOver: Bool) throws {
        let link = try writer.link()
        let found: Int?
        do { found = try Schema.existingVersion(link) } catch { throw failure(error, doing: "reading the schema") }
        if let found, found > Schema.version {
            throw ReplicationError(
                .schemaNewer,
                "the database \(address) holds Herald's replicated-log schema version \(found), newer than this binary's \(Schema.version); upgrade herald")
        }
        if role == .leader && !takeOver, let owner = try currentOwner(), owner.owner != node, owner.silentSeconds < Double(Self.leaseSeconds) {
            throw ReplicationError(
                .owned,
                "log id \(logId) in \(address) is owned by node \(owner.owner) (epoch \(owner.epoch), heard from \(Int(owner.silentSeconds)) s ago); start with --take-over to fence it and take the log over"
            )
        }
    }

    /// The owner recorded for the log id, and how long ago it was heard from.
    func currentOwner() throws -> (owner: String, epoch: Int64, silentSeconds: Double)? {
        guard try Schema.existingVersion(try writer.link()) != nil else { return nil }
        let rows = try query(writer, "reading the log's owner") {
            "SELECT owner, epoch, extract(epoch FROM now() - owner_seen_at)::float8 FROM herald_logs WHERE log_id = \(self.logId)"
        }
        return try rows.first.map { try $0.decode((String, Int64, Double).self) }
    }

    // MARK: Status

    public var status: Status { state.withLock { $0.status } }
    public var epoch: Int64 { state.withLock { $0.epoch } }

    /// Whether writes are accepted now.
    public var isWritable: Bool { status == .writable }

    /// Whether the node should answer `/readyz` 200: anything but fenced or closed.
    public var isReady: Bool {
        switch status {
        case .fenced, .closed, .starting: false
        default: true
        }
    }

    private func setStatus(_ status: Status) {
        state.withLock { $0.status = status }
    }

    // MARK: Start

    /// Brings `store` level with the log and starts the replication thread: checks that the
    /// local log agrees with PostgreSQL wherever both hold records, then (a leader) takes the
    /// log id with a new epoch, seeds an empty log from the store's records, catches up, and
    /// accepts writes; (a follower) catches up and follows. `store` gives the open store (the
    /// server's changes when compaction reopens it). Throws ``ReplicationError``.
    ///
    /// The service tables: `localService` gives the store's own entries, which seed an empty
    /// log; `serviceEntries` gets the log's, which replace the store's (at start, and on a
    /// follower every few seconds).
    public func start(
        store storeSource: @escaping @Sendable () -> Store?, localService: () throws -> [ServiceEntry],
        serviceEntries: @escaping @Sendable ([ServiceEntry]) -> Void
    ) throws {
        guard let store = storeSource() else { throw ReplicationError(.database, "the store is closed") }
        self.storeSource.withLock { $0 = storeSource }
        serviceSink.withLock { $0 = serviceEntries }
        do { _ = try Schema.prepare(try writer.link()) } catch { throw failure(error, doing: "creating the schema") }
        try checkAgreement(store)
        if role == .leader {
            let epoch = try claim()
            state.withLock { $0.epoch = epoch }
            logger.info("replicated log owned", metadata: ["log_id": "\(logId)", "epoch": "\(epoch)", "database": "\(address)"])
            try seedIfEmpty(store)
        }
        if seeding.withLock({ $0 }) {
            state.withLock { $0.status = .writable }
            try writeService(put: try localService())
        }
        let applied = try catchUp(store)
        logger.info("caught up", metadata: ["log_id": "\(logId)", "applied": "\(applied)", "last_seq": "\(store.lastSeq)"])
        serviceEntries(try loadServiceEntries())
        setStatus(role == .leader ? .writable : .following)
        let thread = Thread { [self] in runThread() }
        thread.name = "herald-replication"
        threadStarted.withLock { $0 = true }
        thread.start()
    }

    /// Takes the log id: a new epoch, this node its owner. Returns the epoch.
    private func claim() throws -> Int64 {
        let rows = try transaction(writer, "taking the log id over") {
            """
            INSERT INTO herald_logs (log_id, epoch, owner, owner_seen_at) VALUES (\(self.logId), 1, \(self.node), now())
            ON CONFLICT (log_id) DO UPDATE SET epoch = herald_logs.epoch + 1, owner = EXCLUDED.owner, owner_seen_at = now()
            RETURNING epoch
            """
        }
        guard let epoch = try rows.first?.decode(Int64.self) else { throw ReplicationError(.database, "taking log id \(logId): no epoch returned") }
        return epoch
    }

    /// Stops the replication thread and closes the connections. A leader's later commits are
    /// refused.
    public func close() {
        let previous = state.withLock { state in
            defer { state.status = .closed }
            return state.status
        }
        guard previous != .closed else { return }
        // Closing the connections first ends a query the thread waits on (a heartbeat waiting
        // for a standby that is gone), so that a shutdown never hangs on PostgreSQL.
        writer.close()
        reader.close()
        if threadStarted.withLock({ $0 }) {
            wake.signal()
            if stopped.wait(timeout: .now() + 5) == .timedOut {
                logger.warning("the replication thread did not stop within 5 s", metadata: ["log_id": "\(logId)"])
            }
            writer.close()
            reader.close()
        }
    }

    // MARK: Commit

    /// `LogReplication`: inserts `records` in one statement, only while this node's epoch
    /// owns the log id and the seqs follow the log's last; returns once PostgreSQL's COMMIT
    /// returned without a notice. Throws ``ReplicationError``: fenced, unavailable (503,
    /// retry), outcome unknown.
    package func commit(_ records: ReplicatedRecords) throws {
        let (status, epoch) = state.withLock { ($0.status, $0.epoch) }
        if let refusal = refusal(status) { throw refusal }
        let seqs = records.seqs.map { Int64(bitPattern: $0) }
        var buffers: [ByteBuffer] = []
        buffers.reserveCapacity(records.count)
        for index in 0..<records.count { buffers.append(ByteBuffer(bytes: records.record(index))) }
        let previous = seqs[0] - 1
        let inserted: Int64
        do {
            let result = try writer.withLink { link in
                // Checked again with the connection held: a heartbeat or barrier before it may
                // have found the log unavailable meanwhile.
                if let refusal = self.refusal(self.status) { throw refusal }
                return try link.transaction { link in
                    try link.rows(
                    """
                    WITH owner AS (
                        SELECT l.log_id FROM herald_logs l
                        WHERE l.log_id = \(logId) AND l.epoch = \(epoch)
                          AND coalesce((SELECT max(seq) FROM herald_records WHERE log_id = \(logId)), l.pruned_through) = \(previous)
                        FOR SHARE OF l),
                    ins AS (
                        INSERT INTO herald_records (log_id, seq, epoch, record)
                        SELECT owner.log_id, t.seq, \(epoch), t.record FROM owner, unnest(\(seqs)::int8[], \(buffers)::bytea[]) AS t(seq, record)
                        RETURNING seq)
                    SELECT (SELECT count(*) FROM ins) FROM pg_notify(\(Schema.channel), \(logId))
                    """)
                }
            }
            if !result.notices.isEmpty {
                recover(
                    "a commit of seqs \(records.seqs.first!)...\(records.seqs.last!) returned with a notice (\(result.notices.joined(separator: "; "))): it may not be on the synchronous standby"
                )
                throw ReplicationError(
                    .outcomeUnknown, "the replicated log's commit is not confirmed (a notice came with it); not acknowledged, retry")
            }
            inserted = try result.result.first?.decode(Int64.self) ?? 0
        } catch let error as ReplicationError {
            throw error
        } catch {
            let reason = PostgresLink.reason(error)
            recover("a commit of seqs \(records.seqs.first!)...\(records.seqs.last!) failed: \(reason)")
            throw ReplicationError(.outcomeUnknown, "the replicated log's commit failed (\(reason)); not acknowledged, retry")
        }
        guard inserted != records.count else { return }
        // Nothing inserted: another epoch owns the log, or the log has moved past this store.
        try checkOwnership(epoch: epoch)
        recover("the log in PostgreSQL does not end at seq \(previous) as the store's does")
        throw ReplicationError(.unavailable, "the store is behind the replicated log; catching up, retry")
    }

    /// Why a commit is refused in `status`, or `nil` when the node may write.
    private func refusal(_ status: Status) -> ReplicationError? {
        switch status {
        case .writable: nil
        case .fenced(let reason): ReplicationError(.fenced, reason)
        case .recovering(let reason): ReplicationError(.unavailable, "the replicated log is unavailable: \(reason)")
        case .following: ReplicationError(.follower, "this node follows log id \(logId) (--follow): it accepts no writes")
        case .starting, .closed: ReplicationError(.unavailable, "the replicated log is not open")
        }
    }

    /// Throws fenced (and fences this node) unless `epoch` still owns the log id.
    func checkOwnership(epoch: Int64) throws {
        let rows: [PostgresRow]
        do {
            rows = try writer.withLink { link in
                try link.rows("SELECT epoch, owner FROM herald_logs WHERE log_id = \(self.logId)")
            }
        } catch {
            recover("reading the log's owner failed: \(PostgresLink.reason(error))")
            throw ReplicationError(.unavailable, "the replicated log is unavailable: \(PostgresLink.reason(error))")
        }
        guard let (current, owner) = try? rows.first?.decode((Int64, String).self), current == epoch else {
            let owner = (try? rows.first?.decode((Int64, String).self)).flatMap { $0 }
            let reason =
                "log id \(logId) was taken over by node \(owner?.1 ?? "?") (epoch \(owner?.0 ?? 0)); this node (epoch \(epoch)) is fenced and writes no more"
            fence(reason)
            throw ReplicationError(.fenced, reason)
        }
        _ = owner
    }

    private func fence(_ reason: String) {
        let first = state.withLock { state in
            if case .fenced = state.status { return false }
            if state.status == .closed { return false }
            state.status = .fenced(reason)
            return true
        }
        if first { logger.critical("fenced", metadata: ["log_id": "\(logId)", "reason": "\(reason)"]) }
    }

    /// Refuses writes until the replication thread has recovered.
    private func recover(_ reason: String) {
        let changed = state.withLock { state in
            guard state.status == .writable else { return false }
            state.status = .recovering(reason)
            return true
        }
        if changed {
            logger.error("replicated log unavailable; writes refused until recovered", metadata: ["log_id": "\(logId)", "reason": "\(reason)"])
            writer.discard()
            wake.signal()
        }
    }

    // MARK: The replication thread

    func storeSourceValue() -> Store? { storeSource.withLock { $0 }?() }

    /// A follower's reader connection LISTENs on the channel commits notify.
    func listenIfNeeded() throws {
        guard !listenState.withLock({ $0 }) else { return }
        try reader.withLink { link in
            link.connection.addListener(channel: Schema.channel) { [wake] _, _ in wake.signal() }
            _ = try link.rows(PostgresQuery(unsafeSQL: "LISTEN \(Schema.channel)"))
        }
        listenState.withLock { $0 = true }
    }

    private func runThread() {
        var lastServiceSync = Date()
        while true {
            let status = self.status
            if status == .closed { break }
            switch status {
            case .writable:
                _ = wake.wait(timeout: .now() + Self.heartbeatSeconds)
                guard self.status == .writable else { continue }
                heartbeat()
            case .recovering:
                if !recoverNow() { _ = wake.wait(timeout: .now() + 0.5) }
            case .following:
                follow()
                if Date().timeIntervalSince(lastServiceSync) > 5 {
                    if let entries = try? loadServiceEntries() { serviceSink.withLock { $0 }?(entries) }
                    lastServiceSync = Date()
                }
                _ = wake.wait(timeout: .now() + 1)
            case .fenced, .starting:
                _ = wake.wait(timeout: .now() + 1)
            case .closed:
                break
            }
        }
        stopped.signal()
    }

    /// Records that the owner is alive, and finds out (idle) that it was fenced.
    private func heartbeat() {
        let epoch = self.epoch
        do {
            let result = try writer.withLink { link in
                try link.transaction { link in
                    try link.rows("UPDATE herald_logs SET owner_seen_at = now() WHERE log_id = \(self.logId) AND epoch = \(epoch) RETURNING epoch")
                }
            }
            if !result.notices.isEmpty { recover("a heartbeat returned with a notice: \(result.notices.joined(separator: "; "))") }
            if result.result.isEmpty { try checkOwnership(epoch: epoch) }
        } catch let error as ReplicationError where error.code == .fenced {
            return
        } catch {
            recover("heartbeat failed: \(PostgresLink.reason(error))")
        }
    }

    /// One attempt to recover: reconnect, still the owner, a barrier, the log read back.
    /// Returns whether writes are accepted again.
    private func recoverNow() -> Bool {
        let epoch = self.epoch
        do {
            // The barrier: a synchronous commit that returns without a notice is on the
            // standby, and so is every commit before it.
            let result = try writer.withLink { link in
                try link.transaction { link in
                    try link.rows("UPDATE herald_logs SET owner_seen_at = now() WHERE log_id = \(self.logId) AND epoch = \(epoch) RETURNING epoch")
                }
            }
            guard result.notices.isEmpty else {
                writer.discard()
                return false
            }
            if result.result.isEmpty {
                try checkOwnership(epoch: epoch)
                return false
            }
            guard let store = storeSource.withLock({ $0 })?() else { return false }
            let applied = try catchUp(store)
            // A failover that lost commits this store has (PostgreSQL ahead of LMDB is
            // repaired; behind it cannot be): no more writes here, said loudly.
            let local = try store.history.bounds().lastSeqInLog, remote = try remoteBounds().last
            if local > remote {
                fence(
                    "the store at \(store.path) holds seqs up to \(local), past the last seq \(remote) of log id \(logId) in \(address) (a failover lost commits?); writes refused"
                )
                return false
            }
            let recovered = state.withLock { state in
                guard case .recovering = state.status else { return false }
                state.status = .writable
                return true
            }
            if recovered {
                logger.notice("replicated log recovered; writes accepted", metadata: ["log_id": "\(logId)", "applied": "\(applied)"])
            }
            return recovered
        } catch {
            writer.discard()
            return false
        }
    }

    // MARK: Errors

    /// ``query(_:_:_:)`` inside a transaction (every write: see ``PostgresLink/transaction(_:)``);
    /// a notice with its commit throws ``ReplicationError/Code/outcomeUnknown``.
    func transaction(_ slot: LinkSlot, _ doing: String, _ body: () -> PostgresQuery) throws -> [PostgresRow] {
        let result: (result: [PostgresRow], notices: [String])
        do {
            result = try slot.withLink { link in try link.transaction { link in try link.rows(body()) } }
        } catch let error as ReplicationError {
            throw error
        } catch {
            slot.discard()
            throw failure(error, doing: doing)
        }
        guard result.notices.isEmpty else {
            throw ReplicationError(
                .outcomeUnknown, "\(doing) in \(address), log id \(logId): the commit came with a notice (\(result.notices.joined(separator: "; ")))")
        }
        return result.result
    }

    /// Runs `body`'s query on `slot`'s link, turning errors into ``ReplicationError``s.
    func query(_ slot: LinkSlot, _ doing: String, _ body: () -> PostgresQuery) throws -> [PostgresRow] {
        do {
            return try slot.withLink { link in try link.rows(body()) }
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw failure(error, doing: doing)
        }
    }

    func failure(_ error: any Error, doing: String) -> ReplicationError {
        if let error = error as? ReplicationError { return error }
        return ReplicationError(.database, "\(doing) in \(address), log id \(logId): \(PostgresLink.reason(error))")
    }
}

/// An entry of the service tables kept with the log (`herald_service`).
public struct ServiceEntry: Sendable, Hashable {
    public var table: String
    public var key: String
    public var value: [UInt8]

    public init(table: String, key: String, value: [UInt8]) {
        self.table = table
        self.key = key
        self.value = value
    }
}

/// A connection made when first needed and again after ``discard()``, used one query at a
/// time.
final class LinkSlot: Sendable {
    let address: LogAddress
    let recordingNotices: Bool
    private let current = Mutex<PostgresLink?>(nil)
    private let inUse = NSLock()

    init(address: LogAddress, recordingNotices: Bool = true) {
        self.address = address
        self.recordingNotices = recordingNotices
    }

    /// The connection, made now if there is none.
    func link() throws(ReplicationError) -> PostgresLink {
        if let link = current.withLock({ $0 }), !link.isClosed { return link }
        let link = try PostgresLink.connect(address, recordingNotices: recordingNotices)
        current.withLock { $0 = link }
        return link
    }

    /// Runs `body` with the connection, alone on it.
    func withLink<Result>(_ body: (PostgresLink) throws -> Result) throws -> Result {
        inUse.lock()
        defer { inUse.unlock() }
        return try body(try link())
    }

    /// Closes the connection; the next use makes a new one.
    func discard() {
        let link = current.withLock { link in
            defer { link = nil }
            return link
        }
        link?.close()
    }

    func close() { discard() }

    /// A connection still open when its slot goes (a start that failed) is closed, unless on
    /// an event loop, where waiting is not allowed.
    deinit {
        if MultiThreadedEventLoopGroup.currentEventLoop == nil { discard() }
    }
}
