import CLMDB

/// A handle to one named database inside an ``Environment`` (`MDB_dbi`).
package struct Database: Sendable, Hashable {
    let handle: MDB_dbi
    /// The database's name.
    package let name: String
}
