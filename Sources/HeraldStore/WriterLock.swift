#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one-writer-process rule: an exclusive `flock` on `herald.lock` in the store
/// directory, held while a writable store is open. The file holds the holder's pid, only to
/// make the refusal message useful; the lock itself is what counts, and the kernel drops it
/// when the process dies, so a crash never leaves a store locked.
final class WriterLock: Sendable {
    private let descriptor: Int32

    static let fileName = "herald.lock"

    init(directory: String) throws(StoreError) {
        let path = directory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.system(path: path, operation: "open", errno: errno) }
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
            if code == EWOULDBLOCK {
                throw StoreError.locked(path: directory, holder: pid.isEmpty ? nil : "pid \(pid)")
            }
            throw StoreError.system(path: path, operation: "flock", errno: code)
        }
        let pid = Array(String(getpid()).utf8)
        _ = ftruncate(fd, 0)
        _ = pwrite(fd, pid, pid.count, 0)
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }
}
