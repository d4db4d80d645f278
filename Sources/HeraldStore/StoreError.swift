import HeraldEvents
import LMDB

/// Why a store operation failed. Every case names the store path and, where there is one,
/// the seq or the event at fault.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// Another process holds the store open for writing.
    case locked(path: String, holder: String?)
    /// The directory does not hold a Herald store (and creating one was not asked for).
    case notFound(path: String)
    /// The store was written by a newer Herald, or is not a Herald store.
    case unsupportedFormat(path: String, found: String)
    /// An event of a batch is invalid; nothing of the batch was appended.
    case invalidEvent(index: Int, EventError)
    /// The one event given to `append(_:source:)` is invalid; nothing was appended.
    case invalid(EventError)
    /// A stored record fails its checksum or cannot be decoded.
    case damagedRecord(path: String, seq: UInt64, reason: String)
    /// A snapshot that is needed (the compaction base with no archive to replay instead, or
    /// the one compaction was asked to use) is missing, fails its checksum or cannot be decoded.
    case damagedSnapshot(path: String, seq: UInt64, reason: String)
    /// LMDB reported an error.
    case lmdb(LMDBError)
    /// An operating-system call failed.
    case system(path: String, operation: String, errno: Int32)
    /// An imported record's seq does not come after the log's last seq.
    case outOfOrder(path: String, seq: UInt64, lastSeq: UInt64)
    /// An imported record's seq is above ``SeqKey/maximum``.
    case seqOutOfRange(path: String, seq: UInt64)
    /// The history asked for was compacted away without an archive.
    case historyCompacted(path: String, base: UInt64)
    /// The history asked for was expired by archive retention: exported to `files` (in the
    /// export directory) and removed; the kept history starts after `origin`.
    case historyExported(path: String, origin: UInt64, files: [String])
    /// A log or archive key is not the seq the history calls for: repeated, out of order,
    /// not 8 bytes, or after a gap no purge or compaction recorded (a damaged key or a lost
    /// page).
    case brokenSequence(path: String, seq: UInt64, reason: String)
    /// The store's history says `archive/` holds the records through `through`, which
    /// compaction removed from the log, but it is gone.
    case missingArchive(path: String, through: UInt64)
    /// A writable open found what is left of a store (an archive, a lock file) beside a
    /// missing or empty `data.mdb`, and would have started a new log over it.
    case remnants(path: String, reason: String)
    /// The operation needs a writable store.
    case readOnly(path: String)
    /// `snapshot()` cannot write the state: the store's projection is not the state
    /// of its history.
    case snapshotUnavailable(path: String, reason: String)
    /// A follower of ``Store/appliedEvents(after:bufferLimit:)`` fell further behind than its
    /// buffer holds: its stream ended after the event at `lastDelivered`; follow again with
    /// `appliedEvents(after: lastDelivered)` to miss nothing.
    case followerFellBehind(path: String, lastDelivered: UInt64)
    /// The store was closed (``Store/close()``).
    case closed(path: String)
    /// No event of the store's history (nor the snapshot it starts from) names the account.
    case unknownAccount(path: String, account: String)
    /// No event of the account's history (nor the snapshot it starts from) names the chat;
    /// `chats` are the account's chats now, in byte order.
    case unknownChat(path: String, account: String, chat: String, chats: [String])
    /// ``Store/addKey(_:rebind:)`` of a Telegram key the store holds bound to another account
    /// (`""`: any account).
    case keyBound(path: String, id: Int64, account: String)
    /// ``Store/backup(to:)`` wrote nothing to `destination`: it exists and is not an empty
    /// directory, or the copy failed its check.
    case backupRefused(destination: String, reason: String)

    /// What to do about a damaged data file.
    static let damageAdvice =
        "restore the store from a backup, or run `herald salvage --store DAMAGED --to NEW` to copy out every record that still checks out"

    public var description: String {
        switch self {
        case .locked(let path, let holder):
            "store \(path) is locked by another writer\(holder.map { " (\($0))" } ?? ""); close it or open the store read-only"
        case .notFound(let path):
            "no Herald store at \(path)"
        case .unsupportedFormat(let path, let found):
            "store \(path) has an unsupported format: \(found)"
        case .invalid(let error):
            "the event is invalid: \(error); nothing was appended"
        case .invalidEvent(let index, let error):
            "event \(index + 1) of the batch is invalid: \(error); nothing was appended"
        case .damagedRecord(let path, let seq, let reason):
            "store \(path): record seq \(seq) is damaged: \(reason)"
        case .damagedSnapshot(let path, let seq, let reason):
            "store \(path): snapshot at seq \(seq) is unusable: \(reason)"
        case .lmdb(let error):
            error.isDamage ? "\(error.damage?.description ?? error.description); \(Self.damageAdvice)" : error.description
        case .brokenSequence(let path, let seq, let reason):
            "store \(path): the log is damaged at seq \(seq): \(reason); run `herald verify` to list every problem, "
                + "restore the store from a backup, or run `herald salvage` to copy out what still checks out"
        case .missingArchive(let path, let through):
            "store \(path): its archive (\(path)/archive/) is missing, but the history says it holds the records through "
                + "seq \(through), which compaction removed from the log; put the archive back (restore it from a backup) "
                + "to read the history before then; `herald state` from a snapshot still works"
        case .remnants(let path, let reason):
            "store \(path): \(reason); a new log here would reuse seqs and orphan what is left: restore data.mdb from a "
                + "backup, run `herald salvage --store \(path) --to NEW` to recover what remains, or move the directory "
                + "aside to start a new store"
        case .system(let path, let operation, let errno):
            "\(path): \(operation) failed: \(String(cString: strerror(errno)))"
        case .seqOutOfRange(let path, let seq):
            "store \(path): seq \(seq) is above the largest seq a record may have (\(SeqKey.maximum))"
        case .outOfOrder(let path, let seq, let lastSeq):
            "store \(path): seq \(seq) does not come after the last seq \(lastSeq)"
        case .historyCompacted(let path, let base):
            "store \(path): history up to seq \(base) was compacted without an archive; only later points can be rebuilt"
        case .historyExported(let path, let origin, let files):
            "store \(path): history up to seq \(origin) expired under archive retention and was exported before removal, to "
                + files.joined(separator: ", ")
                + "; only later points can be rebuilt here (import the exports into a new store, `zcat FILE… | herald import --store NEW -`, to rebuild earlier ones)"
        case .readOnly(let path):
            "store \(path) is open read-only"
        case .snapshotUnavailable(let path, let reason):
            "store \(path) cannot take a snapshot: \(reason)"
        case .followerFellBehind(let path, let seq):
            "store \(path): the follower fell behind by more than its buffer after seq \(seq); follow again with appliedEvents(after: \(seq))"
        case .closed(let path):
            "store \(path) is closed"
        case .unknownAccount(let path, let account):
            "store \(path) holds no account '\(account)'"
        case .unknownChat(let path, let account, let chat, _):
            "no event of account '\(account)' in store \(path) names chat '\(chat)'"
        case .keyBound(let path, let id, let account):
            "Telegram key \(id) is bound to \(account.isEmpty ? "any account" : account) in store \(path); rebind it to move it"
        case .backupRefused(let destination, let reason):
            "no backup written to \(destination): \(reason)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
