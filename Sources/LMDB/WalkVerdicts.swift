import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Remembered clean page walks (``Environment/Options/walkVerdicts``): a walk of every
/// B-tree page of a large `data.mdb` costs about as much as the read it guards (a second per
/// 2.5 GB), so a reading command run again on the same, unchanged file skips it.
///
/// One file per data file in the directory, named by a 64-bit FNV-1a hash of the data file's
/// path, holding one line: device, inode, size, modification and status-change times
/// (seconds and nanoseconds) of the data file, and the txnid of the commit walked. A later
/// open skips the walk only when all of these are equal: any write to the file, by LMDB or
/// anything else, changes its status-change time, which no unprivileged process can set, and
/// a new commit changes the txnid. A verdict is written only after a clean walk of a file
/// unchanged for two seconds, atomically (temporary file, rename); one that cannot be read or
/// written is ignored.
enum WalkVerdicts {
    /// Walks run since the process started (tests count them).
    static let walks = Atomic<Int>(0)

    /// The line a verdict holds for `file` at commit `transactionId`; `nil` when the file
    /// cannot be examined.
    static func line(file: String, transactionId: UInt64) -> String? {
        var status = stat()
        guard stat(file, &status) == 0 else { return nil }
        return [
            UInt64(status.st_dev), UInt64(status.st_ino), UInt64(status.st_size),
            UInt64(status.st_mtim.tv_sec), UInt64(status.st_mtim.tv_nsec),
            UInt64(status.st_ctim.tv_sec), UInt64(status.st_ctim.tv_nsec), transactionId,
        ].map(String.init).joined(separator: " ")
    }

    /// The verdict file for data file `file` in `directory`.
    static func verdictPath(directory: String, file: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (realPath(file) ?? file).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return directory + "/walk-" + String(hash, radix: 16)
    }

    /// Whether a clean walk of `file` at `transactionId` is remembered in `directory`.
    static func remembers(directory: String, file: String, transactionId: UInt64) -> Bool {
        guard let expected = line(file: file, transactionId: transactionId),
            let stored = read(verdictPath(directory: directory, file: file))
        else { return false }
        return stored == expected
    }

    /// Remembers a clean walk of `file` at `transactionId` in `directory` (created if missing).
    ///
    /// Not while the file is fresh: a file changed within the last two seconds may change
    /// again within one tick of a coarse file-system clock without its times moving (git's
    /// "racy" index entries), so only a file unchanged for longer is remembered.
    static func remember(directory: String, file: String, transactionId: UInt64) {
        var status = stat()
        var now = timespec()
        guard stat(file, &status) == 0, clock_gettime(CLOCK_REALTIME, &now) == 0,
            now.tv_sec - status.st_ctim.tv_sec >= 2, now.tv_sec - status.st_mtim.tv_sec >= 2
        else { return }
        guard let line = line(file: file, transactionId: transactionId) else { return }
        _ = mkdir(directory, 0o700)
        let path = verdictPath(directory: directory, file: file)
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { return }
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if written == bytes.count { rename(temporary, path) } else { unlink(temporary) }
    }

    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 1, buffer[count - 1] == UInt8(ascii: "\n") else { return nil }
        return String(decoding: buffer[..<(count - 1)], as: UTF8.self)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
