import CLMDB

/// A handle to one named database inside an ``Environment`` (`MDB_dbi`).
public struct Database: Sendable, Hashable {
    let handle: MDB_dbi
    /// The database's name.
    public let name: String
}
