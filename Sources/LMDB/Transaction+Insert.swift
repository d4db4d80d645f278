import CLMDB

extension Transaction {
    /// Stores `value` under `key` unless the key is present (`MDB_NOOVERWRITE`); returns
    /// whether it stored it.
    package func insert(_ database: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        do {
            try put(database, key: key, value: value, flags: .noOverwrite)
            return true
        } catch where error.code == MDB_KEYEXIST {
            return false
        }
    }
}
