import HeraldEvents
import LMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a store operation failed, in the manner of swift-nio's `FileSystemError`: a ``code``
/// saying what kind of failure it is, a ``message`` for people, the ``path`` and ``seq`` it
/// concerns, and the ``underlying`` error, when another error caused it. Every failure of a
/// `Store` method, LMDB's included, is a `StoreError`.
///
/// Match on the code, which can gain members without breaking a `switch`:
///
/// ```swift
/// do {
///     try store.append(event)
/// } catch let error as StoreError where error.code == .invalid {
///     print("rejected:", error.underlying.map { "\($0)" } ?? error.message)
/// }
/// ```
///
/// or, as a pattern, `catch StoreError.Code.readOnly { … }`.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case locked, notFound, unsupportedFormat, invalidEvent, invalid, damagedRecord
            case damagedSnapshot, lmdb, system, outOfOrder, seqOutOfRange, historyCompacted
            case historyExported, brokenSequence, missingArchive, remnants, readOnly
            case snapshotUnavailable, followerFellBehind, closed, unknownAccount, unknownChat
            case keyBound, backupRefused
        }

        fileprivate var kind: Kind

        fileprivate init(_ kind: Kind) { self.kind = kind }

        /// Another process holds the store open for writing (the message says who, when
        /// known).
        public static let locked = Code(.locked)
        /// The directory does not hold a Herald store (and creating one was not asked for).
        public static let notFound = Code(.notFound)
        /// The store was written by a newer Herald, or is not a Herald store (the message
        /// names the format found).
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// An event of a batch is invalid (the message gives its position in the batch,
        /// ``StoreError/underlying`` is its `EventError`); nothing of the batch was appended.
        public static let invalidEvent = Code(.invalidEvent)
        /// The one event given to `append(_:source:)` is invalid (``StoreError/underlying`` is
        /// its `EventError`); nothing was appended.
        public static let invalid = Code(.invalid)
        /// A stored record (``StoreError/seq``) fails its checksum or cannot be decoded.
        public static let damagedRecord = Code(.damagedRecord)
        /// A snapshot that is needed (the compaction base with no archive to replay instead,
        /// or the one compaction was asked to use) is missing, fails its checksum or cannot be
        /// decoded (``StoreError/seq``: its seq).
        public static let damagedSnapshot = Code(.damagedSnapshot)
        /// LMDB reported an error (a damaged data file, a full disk, a refused open;
        /// ``StoreError/underlying`` is LMDB's own error).
        public static let lmdb = Code(.lmdb)
        /// An operating-system call failed (the message names the call and its `errno`).
        public static let system = Code(.system)
        /// An imported record's seq does not come after the log's last seq (the message gives
        /// both).
        public static let outOfOrder = Code(.outOfOrder)
        /// An imported record's seq is above the largest seq a record may have.
        public static let seqOutOfRange = Code(.seqOutOfRange)
        /// The history asked for was compacted without an archive (``StoreError/seq``: the
        /// compaction base).
        public static let historyCompacted = Code(.historyCompacted)
        /// The history asked for was expired by archive retention: exported to the files the
        /// message names and removed; the kept history starts after ``StoreError/seq``.
        public static let historyExported = Code(.historyExported)
        /// A log or archive key is not the seq the history calls for: repeated, out of order,
        /// not 8 bytes, or after a gap no purge or compaction recorded (a damaged key or a
        /// lost page).
        public static let brokenSequence = Code(.brokenSequence)
        /// The store's history says `archive/` holds the records through ``StoreError/seq``,
        /// which compaction removed from the log, but it is gone.
        public static let missingArchive = Code(.missingArchive)
        /// A writable open found what is left of a store (an archive, a lock file) beside a
        /// missing or empty `data.mdb`, and would have started a new log over it.
        public static let remnants = Code(.remnants)
        /// The operation needs a writable store.
        public static let readOnly = Code(.readOnly)
        /// `snapshot()` cannot write the state: the store's projection is not the state of
        /// its history.
        public static let snapshotUnavailable = Code(.snapshotUnavailable)
        /// A follower of ``Store/appliedEvents(after:bufferLimit:)`` fell further behind than
        /// its buffer holds: its stream ended after the event at ``StoreError/seq``; follow
        /// again with `appliedEvents(after: seq)` to miss nothing.
        public static let followerFellBehind = Code(.followerFellBehind)
        /// The store was closed (``Store/close()``).
        public static let closed = Code(.closed)
        /// No event of the store's history (nor the snapshot it starts from) names the
        /// account.
        public static let unknownAccount = Code(.unknownAccount)
        /// No event of the account's history (nor the snapshot it starts from) names the chat.
        public static let unknownChat = Code(.unknownChat)
        /// ``Keyring/add(_:rebind:)`` of a Telegram key the store holds bound to another
        /// account (the message names the key and the account).
        public static let keyBound = Code(.keyBound)
        /// ``StoreMaintenance/backup(to:)`` wrote nothing to the destination (``StoreError/path``): it
        /// exists and is not an empty directory, or the copy failed its check.
        public static let backupRefused = Code(.backupRefused)

        public var description: String { "\(kind)" }

        /// Whether `error` is a ``StoreError`` with this code, so that a code is a pattern:
        /// `catch StoreError.Code.readOnly { … }`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? StoreError)?.code == code
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The directory the failure concerns: the store's; for ``Code/backupRefused`` the
    /// backup's destination, for ``Code/system`` the file the call concerned. `nil` for
    /// ``Code/invalid`` and ``Code/invalidEvent`` (and for ``Code/lmdb``, whose message names
    /// the file).
    public var path: String?
    /// The seq the failure concerns: the damaged record or snapshot, the imported record, the
    /// broken key; the compaction base (``Code/historyCompacted``), the exported history's end
    /// (``Code/historyExported``), the archive's last record (``Code/missingArchive``), the
    /// last event delivered (``Code/followerFellBehind``); `nil` when none does.
    public var seq: UInt64?
    /// The error that caused this one, when there is one: the `EventError` of an invalid
    /// event (``Code/invalid``, ``Code/invalidEvent``), LMDB's own error (``Code/lmdb``).
    public var underlying: (any Error & Sendable)?
    /// What failed and what to do about it, in words: the ``description``.
    public var message: String { description }

    // The details each kind's message is made of, for the CLI and the server.

    /// The log's last seq (``Code/outOfOrder``).
    package var lastSeq: UInt64?
    /// Why, in words (damage, remnants, a refused snapshot or backup), or the format found
    /// (``Code/unsupportedFormat``).
    package var reason: String?
    /// Who holds the writer lock, when known (``Code/locked``).
    package var holder: String?
    /// The refused event's index in its batch, from 0 (``Code/invalidEvent``).
    package var batchIndex: Int?
    /// The operating-system call that failed (``Code/system``).
    package var operation: String?
    /// Its `errno` (``Code/system``).
    package var errno: Int32?
    /// The account named (``Code/unknownAccount``, ``Code/unknownChat``) or the account a
    /// key is bound to (``Code/keyBound``; `""`: any account).
    package var account: String?
    /// The chat named (``Code/unknownChat``).
    package var chat: String?
    /// The account's chats now, in byte order (``Code/unknownChat``).
    package var chats: [String]?
    /// The Telegram key's id (``Code/keyBound``).
    package var keyID: Int64?
    /// The export files the expired history went to (``Code/historyExported``).
    package var files: [String]?
    /// Why the event was refused (``Code/invalid``, ``Code/invalidEvent``).
    package var eventError: EventError? { underlying as? EventError }
    /// LMDB's own error (``Code/lmdb``).
    package var lmdbError: LMDBError? { underlying as? LMDBError }

    private init(_ kind: Code.Kind, path: String? = nil, seq: UInt64? = nil, reason: String? = nil) {
        self.code = Code(kind)
        self.path = path
        self.seq = seq
        self.reason = reason
    }

    /// What to do about a damaged data file.
    static let damageAdvice =
        "restore the store from a backup, or run `herald salvage --store DAMAGED --to NEW` to copy out every record that still checks out"

    public var description: String {
        let path = path ?? ""
        switch code.kind {
        case .locked:
            return "store \(path) is locked by another writer\(holder.map { " (\($0))" } ?? ""); close it or open the store read-only"
        case .notFound:
            return "no Herald store at \(path)"
        case .unsupportedFormat:
            return "store \(path) has an unsupported format: \(reason ?? "")"
        case .invalid:
            return "the event is invalid: \(eventError.map { "\($0)" } ?? ""); nothing was appended"
        case .invalidEvent:
            return "event \((batchIndex ?? 0) + 1) of the batch is invalid: \(eventError.map { "\($0)" } ?? ""); nothing was appended"
        case .damagedRecord:
            return "store \(path): record seq \(seq ?? 0) is damaged: \(reason ?? "")"
        case .damagedSnapshot:
            return "store \(path): snapshot at seq \(seq ?? 0) is unusable: \(reason ?? "")"
        case .lmdb:
            guard let error = lmdbError else { return "LMDB failed" }
            return error.isDamage ? "\(error.damage?.description ?? error.description); \(Self.damageAdvice)" : error.description
        case .brokenSequence:
            return "store \(path): the log is damaged at seq \(seq ?? 0): \(reason ?? ""); run `herald verify` to list every problem, "
                + "restore the store from a backup, or run `herald salvage` to copy out what still checks out"
        case .missingArchive:
            let through = seq ?? 0
            return "store \(path): its archive (\(path)/archive/) is missing, but the history says it holds the records through "
                + "seq \(through), which compaction removed from the log; put the archive back (restore it from a backup) "
                + "to read the history before then; `herald state` from a snapshot still works"
        case .remnants:
            return "store \(path): \(reason ?? ""); a new log here would reuse seqs and orphan what is left: restore data.mdb from a "
                + "backup, run `herald salvage --store \(path) --to NEW` to recover what remains, or move the directory "
                + "aside to start a new store"
        case .system:
            return "\(path): \(operation ?? "") failed: \(String(cString: strerror(errno ?? 0)))"
        case .seqOutOfRange:
            return "store \(path): seq \(seq ?? 0) is above the largest seq a record may have (\(SeqKey.maximum))"
        case .outOfOrder:
            return "store \(path): seq \(seq ?? 0) does not come after the last seq \(lastSeq ?? 0)"
        case .historyCompacted:
            return "store \(path): history up to seq \(seq ?? 0) was compacted without an archive; only later points can be rebuilt"
        case .historyExported:
            return "store \(path): history up to seq \(seq ?? 0) expired under archive retention and was exported before removal, to "
                + (files ?? []).joined(separator: ", ")
                + "; only later points can be rebuilt here (import the exports into a new store, `zcat FILE… | herald import --store NEW -`, to rebuild earlier ones)"
        case .readOnly:
            return "store \(path) is open read-only"
        case .snapshotUnavailable:
            return "store \(path) cannot take a snapshot: \(reason ?? "")"
        case .followerFellBehind:
            let seq = seq ?? 0
            return "store \(path): the follower fell behind by more than its buffer after seq \(seq); follow again with appliedEvents(after: \(seq))"
        case .closed:
            return "store \(path) is closed"
        case .unknownAccount:
            return "store \(path) holds no account '\(account ?? "")'"
        case .unknownChat:
            return "no event of account '\(account ?? "")' in store \(path) names chat '\(chat ?? "")'"
        case .keyBound:
            let account = account ?? ""
            return "Telegram key \(keyID ?? 0) is bound to \(account.isEmpty ? "any account" : account) in store \(path); rebind it to move it"
        case .backupRefused:
            return "no backup written to \(path): \(reason ?? "")"
        }
    }
}

// The errors by the names of their codes, with their details: `throw StoreError.closed(path: path)`.
extension StoreError {
    /// ``Code/locked``.
    package static func locked(path: String, holder: String?) -> StoreError {
        var error = StoreError(.locked, path: path)
        error.holder = holder
        return error
    }

    /// ``Code/notFound``.
    package static func notFound(path: String) -> StoreError { StoreError(.notFound, path: path) }

    /// ``Code/unsupportedFormat``.
    package static func unsupportedFormat(path: String, found: String) -> StoreError {
        StoreError(.unsupportedFormat, path: path, reason: found)
    }

    /// ``Code/invalidEvent``.
    package static func invalidEvent(index: Int, _ cause: EventError) -> StoreError {
        var error = StoreError(.invalidEvent)
        error.batchIndex = index
        error.underlying = cause
        return error
    }

    /// ``Code/invalid``.
    package static func invalid(_ cause: EventError) -> StoreError {
        var error = StoreError(.invalid)
        error.underlying = cause
        return error
    }

    /// ``Code/damagedRecord``.
    package static func damagedRecord(path: String, seq: UInt64, reason: String) -> StoreError {
        StoreError(.damagedRecord, path: path, seq: seq, reason: reason)
    }

    /// ``Code/damagedSnapshot``.
    package static func damagedSnapshot(path: String, seq: UInt64, reason: String) -> StoreError {
        StoreError(.damagedSnapshot, path: path, seq: seq, reason: reason)
    }

    /// ``Code/lmdb``.
    package static func lmdb(_ cause: LMDBError) -> StoreError {
        var error = StoreError(.lmdb)
        error.underlying = cause
        return error
    }

    /// ``Code/system``.
    package static func system(path: String, operation: String, errno: Int32) -> StoreError {
        var error = StoreError(.system, path: path)
        error.operation = operation
        error.errno = errno
        return error
    }

    /// ``Code/outOfOrder``.
    package static func outOfOrder(path: String, seq: UInt64, lastSeq: UInt64) -> StoreError {
        var error = StoreError(.outOfOrder, path: path, seq: seq)
        error.lastSeq = lastSeq
        return error
    }

    /// ``Code/seqOutOfRange``.
    package static func seqOutOfRange(path: String, seq: UInt64) -> StoreError {
        StoreError(.seqOutOfRange, path: path, seq: seq)
    }

    /// ``Code/historyCompacted``.
    package static func historyCompacted(path: String, base: UInt64) -> StoreError {
        StoreError(.historyCompacted, path: path, seq: base)
    }

    /// ``Code/historyExported``.
    package static func historyExported(path: String, origin: UInt64, files: [String]) -> StoreError {
        var error = StoreError(.historyExported, path: path, seq: origin)
        error.files = files
        return error
    }

    /// ``Code/brokenSequence``.
    package static func brokenSequence(path: String, seq: UInt64, reason: String) -> StoreError {
        StoreError(.brokenSequence, path: path, seq: seq, reason: reason)
    }

    /// ``Code/missingArchive``.
    package static func missingArchive(path: String, through: UInt64) -> StoreError {
        StoreError(.missingArchive, path: path, seq: through)
    }

    /// ``Code/remnants``.
    package static func remnants(path: String, reason: String) -> StoreError {
        StoreError(.remnants, path: path, reason: reason)
    }

    /// ``Code/readOnly``.
    package static func readOnly(path: String) -> StoreError { StoreError(.readOnly, path: path) }

    /// ``Code/snapshotUnavailable``.
    package static func snapshotUnavailable(path: String, reason: String) -> StoreError {
        StoreError(.snapshotUnavailable, path: path, reason: reason)
    }

    /// ``Code/followerFellBehind``.
    package static func followerFellBehind(path: String, lastDelivered: UInt64) -> StoreError {
        StoreError(.followerFellBehind, path: path, seq: lastDelivered)
    }

    /// ``Code/closed``.
    package static func closed(path: String) -> StoreError { StoreError(.closed, path: path) }

    /// ``Code/unknownAccount``.
    package static func unknownAccount(path: String, account: String) -> StoreError {
        var error = StoreError(.unknownAccount, path: path)
        error.account = account
        return error
    }

    /// ``Code/unknownChat``.
    package static func unknownChat(path: String, account: String, chat: String, chats: [String]) -> StoreError {
        var error = StoreError(.unknownChat, path: path)
        error.account = account
        error.chat = chat
        error.chats = chats
        return error
    }

    /// ``Code/keyBound``.
    package static func keyBound(path: String, id: Int64, account: String) -> StoreError {
        var error = StoreError(.keyBound, path: path)
        error.keyID = id
        error.account = account
        return error
    }

    /// ``Code/backupRefused``.
    package static func backupRefused(destination: String, reason: String) -> StoreError {
        StoreError(.backupRefused, path: destination, reason: reason)
    }
}

extension StoreError {
    /// Runs `body`, turning an `LMDBError` it throws into ``Code/lmdb``; every other error
    /// passes as it is (an environment released by ``Store/close()`` gives
    /// ``Code/closed``). The one place the store converts LMDB's errors: the transaction
    /// helpers below and the few direct environment calls go through it.
    static func mappingLMDB<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as LMDBError where error.code == LMDBError.closed {
            throw StoreError.closed(path: error.path)
        } catch let error as LMDBError {
            throw StoreError.lmdb(error)
        }
    }
}

extension Environment {
    /// ``read(_:)``, with LMDB's errors as ``StoreError/Code/lmdb``.
    func storeRead<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try StoreError.mappingLMDB { try read(body) }
    }

    /// ``write(_:)``, with LMDB's errors as ``StoreError/Code/lmdb``.
    func storeWrite<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        try StoreError.mappingLMDB { try write(body) }
    }
}
