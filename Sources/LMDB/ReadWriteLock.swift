#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX read-write lock. Transactions hold it shared; growing the map holds it
/// exclusively, because lmdb.h says of `mdb_env_set_mapsize`: "This function may only be
/// called if no transactions are active in the current process."
final class ReadWriteLock: @unchecked Sendable {
    // @unchecked: the pthread lock is itself the synchronization; it is never moved. Each
    // thread touches only its own value of `holds`.
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>
    /// How many times each thread holds the lock shared (a thread-specific value), so that
    /// a thread can tell that taking it exclusively would wait for itself forever; `nil`
    /// when no key could be had, and then nothing is counted.
    private let holds: pthread_key_t?

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        let rc = pthread_rwlock_init(lock, nil)
        precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
        var key = pthread_key_t()
        holds = pthread_key_create(&key, nil) == 0 ? key : nil
    }

    deinit {
        if let holds { pthread_key_delete(holds) }
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Whether the calling thread holds the lock shared (inside a transaction).
    var isHeldSharedByCurrentThread: Bool {
        guard let holds else { return false }
        return pthread_getspecific(holds) != nil
    }

    func withShared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_rdlock(lock)
        countHold(+1)
        defer {
            countHold(-1)
            pthread_rwlock_unlock(lock)
        }
        return try body()
    }

    /// Adds `change` to the calling thread's count of shared holds.
    @inline(__always)
    private func countHold(_ change: Int) {
        guard let holds else { return }
        let count = Int(bitPattern: pthread_getspecific(holds)) + change
        pthread_setspecific(holds, UnsafeRawPointer(bitPattern: count))
    }

    func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
