import Foundation
import HeraldEvents
import HeraldProjection
import LMDB

// Errors read through Foundation (`error.localizedDescription`, an app's alert) carry the same
// message as their `description`, which names the store, the seq or the field, instead of
// "The operation could not be completed. (HeraldStore.StoreError error 3.)".

extension StoreError: LocalizedError {
    public var errorDescription: String? { description }
}

extension LMDBError: LocalizedError {
    package var errorDescription: String? { description }
}

extension EventError: LocalizedError {
    public var errorDescription: String? { description }
}

extension SnapshotError: LocalizedError {
    public var errorDescription: String? { description }
}

extension LogRecord.Damage: LocalizedError {
    package var errorDescription: String? { description }
}
