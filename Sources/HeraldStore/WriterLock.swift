#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LMDB
import Synchronization

/// The one-writer-process rule: an exclusive `flock` on `herald.lock` in the store
/// directory, held while a writable store is open. The file holds the holder's pid, only to
/// make the refusal message useful; the lock itself is what counts, and the kernel drops it
/// when the process dies, so a crash never leaves a store locked.
package final class WriterLock: Sendable {
    /// The lock file's descriptor, `nil` once released.
    private let descriptor: Mutex<Int32?>
    /// The lock file's identity: its key in ``heldHere``.
    private let identity: FileIdentity

    package static let fileName = "herald.lock"

    /// The lock files this process holds a `WriterLock` on. A second writable open of a
    /// store this process already writes is refused at once: `flock` alone cannot tell it
    /// from a lock that a closed store left with a child being spawned, which is worth
    /// waiting for.
    private static let heldHere = Mutex<Set<FileIdentity>>([])

    init(directory: String) throws(StoreError) {
        let path = directory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.system(path: path, operation: "open", errno: errno) }
        guard let identity = FileIdentity(descriptor: fd) else {
            let code = errno
            close(fd)
            throw StoreError.system(path: path, operation: "fstat", errno: code)
        }
        // Claimed before `flock`, so two threads of this process opening the same store at
        // once cannot both take the wait below for the other's lock.
        guard Self.heldHere.withLock({ $0.insert(identity).inserted }) else {
            close(fd)
            throw StoreError.locked(path: directory, holder: "a store open in this process, pid \(getpid())")
        }
        // The holder is this very process when a store it just closed left the lock with a
        // child being spawned: between fork and exec the child shares the open file (O_CLOEXEC
        // acts only at exec). That lasts milliseconds, so wait for it, up to a second.
        var attempts = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            let pid = n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : ""
            if code == EWOULDBLOCK && pid == String(getpid()) && attempts < 200 {
                attempts += 1
                usleep(5_000)
                continue
            }
            close(fd)
            Self.heldHere.withLock { _ = $0.remove(identity) }
            if code == EWOULDBLOCK {
                throw StoreError.locked(path: directory, holder: pid.isEmpty ? nil : "pid \(pid)")
            }
            throw StoreError.system(path: path, operation: "flock", errno: code)
        }
        let pid = Array(String(getpid()).utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        descriptor = Mutex(fd)
        self.identity = identity
    }

    /// A reader's hold on the writer lock: while it lasts (the file descriptor it returns,
    /// open with a shared `flock`), no writable store can open `directory` in any process.
    /// `nil` when a writer holds it now, or when the store has no lock file (a copy without
    /// one: nothing is created to hold). Changes no byte of the file.
    package static func shared(directory: String) -> Int32? {
        let fd = open(directory + "/" + fileName, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    deinit { release() }

    /// Gives the lock up now (a closed store's), rather than when the last reference goes.
    /// Idempotent.
    func release() {
        guard let fd = descriptor.withLock({ $0.take() }) else { return }
        // Released before the lock: an open racing with this one then finds the lock still
        // held by its own process and waits for it, instead of being refused.
        Self.heldHere.withLock { _ = $0.remove(identity) }
        close(fd)
    }
}
