// LMDB is the one layer of Herald that touches LMDB pointers. Every `mdb_*` call lives in
// this module and every return code goes through `check(_:_:path:)`. Above it, bytes are
// borrowed through closures and transactions are scoped to closures. It also keeps LMDB's
// rule that an environment is open at most once per process: every `Environment` opened on
// one directory shares one `MDB_env` (see `EnvironmentRegistry`).

import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by LMDB, with the operation and path it concerns.
package struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The return code (an LMDB `MDB_*` code or an errno value).
    package var code: Int32
    /// The LMDB function that failed, e.g. `mdb_env_open`.
    package var operation: String
    /// The environment's path.
    package var path: String
    /// Why, in words, when this wrapper refused the operation itself and LMDB's text for
    /// `code` would not say it (see ``incompatibleOpen``); `nil` for LMDB's own errors.
    package var reason: String?
    /// What is wrong with the data file, when the open's own checks found it damaged
    /// (``DataFile``); the code is then `MDB_CORRUPTED`.
    package var damage: DataFileDamage?

    /// Creates an error for a failed `operation`; `reason` replaces LMDB's text for `code`.
    package init(code: Int32, operation: String, path: String, reason: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    /// ``reason`` when there is one, else LMDB's own text for the code (`mdb_strerror`).
    package var message: String { reason ?? String(cString: mdb_strerror(code)) }

    package var description: String {
        if let damage { return damage.description }
        return "\(path): \(operation) failed: \(message) (\(code))"
    }

    /// Whether the error says the data file is damaged: the open's own checks found it so
    /// (``damage``), or LMDB reported `MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`, `MDB_INVALID`
    /// (not an LMDB file) or `MDB_VERSION_MISMATCH`.
    package var isDamage: Bool {
        damage != nil || isCorruption || code == MDB_INVALID || code == MDB_VERSION_MISMATCH
    }

    /// `MDB_MAP_FULL`: the environment's map size is reached.
    package static let mapFull: Int32 = MDB_MAP_FULL
    /// `MDB_MAP_RESIZED`: another process grew the map beyond this process's size.
    package static let mapResized: Int32 = MDB_MAP_RESIZED
    /// `MDB_KEYEXIST`: the key is already present (or out of order with `append`).
    package static let keyExists: Int32 = MDB_KEYEXIST
    /// `EBUSY`, with operation `open` and a ``reason``: the environment is already open in this
    /// process in a way this open cannot share (a writable open while LMDB holds it
    /// `MDB_RDONLY`, or more named databases than it was opened with), and LMDB allows one
    /// open per process. See ``Environment/init(path:options:)``.
    package static let incompatibleOpen: Int32 = EBUSY
    /// `ESHUTDOWN`, with a ``reason``: the opener was released (``Environment/release()``).
    package static let closed: Int32 = ESHUTDOWN
    /// `MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`: the data file is damaged.
    package var isCorruption: Bool { code == MDB_CORRUPTED || code == MDB_PAGE_NOTFOUND }
}

/// Checks an LMDB return code: 0 passes; misuse (`MDB_BAD_DBI`, `MDB_BAD_VALSIZE`) is a
/// programming error and traps; everything else throws. `MDB_BAD_TXN` throws too: LMDB also
/// answers it for every call in a transaction after one met a damaged page, and a damaged
/// file must never crash the process.
@inline(__always)
func check(_ code: Int32, _ operation: @autoclosure () -> String, path: @autoclosure () -> String) throws(LMDBError) {
    guard code != 0 else { return }
    try fail(code, operation(), path: path())
}

@inline(never)
func fail(_ code: Int32, _ operation: String, path: String) throws(LMDBError) -> Never {
    let error = LMDBError(code: code, operation: operation, path: path)
    switch code {
    case MDB_BAD_DBI, MDB_BAD_VALSIZE:
        preconditionFailure("LMDB misuse: \(error)")
    default:
        throw error
    }
}
