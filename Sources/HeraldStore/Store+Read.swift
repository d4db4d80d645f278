import HeraldEvents
import LMDB

extension Store {
    /// Facts about the store's data file: map size, bytes used, page size, commits.
    public func environmentInfo() -> StorageInfo {
        let info = environment.info()
        return StorageInfo(
            mapSize: info.mapSize, lastPage: info.lastPage, pageSize: info.pageSize, lastTransactionId: info.lastTransactionId)
    }

    /// Facts about the store's data file (``Store/environmentInfo()``).
    public struct StorageInfo: Sendable, Hashable {
        /// The size of the file's memory map in bytes; it grows by itself when it fills up.
        public var mapSize: Int
        /// The number of the last page in use.
        public var lastPage: Int
        /// The page size in bytes.
        public var pageSize: Int
        /// The id of the last committed write transaction: counts commits.
        public var lastTransactionId: Int
        /// Bytes in use: (last page + 1) × page size.
        public var usedBytes: Int { (lastPage + 1) * pageSize }
    }

    /// Flushes to disk what a non-durable mode has not flushed yet.
    public func sync() throws {
        try StoreError.mappingLMDB { try environment.sync() }
    }
}
