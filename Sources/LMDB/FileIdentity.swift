#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's identity on this machine: its device and inode numbers (`st_dev`, `st_ino`).
///
/// Two paths name the same file exactly when their identities are equal, however they are
/// spelled (`dir`, `dir/`, `dir/.`, `a/../dir`, a symbolic link to `dir`). The
/// ``EnvironmentRegistry`` keys open environments by their directory's identity, because
/// LMDB's locks belong to files, not to the paths used to open them; the store's writer
/// lock keys its lock file the same way.
package struct FileIdentity: Hashable, Sendable {
    /// `st_dev`: the device holding the file.
    package var device: UInt64
    /// `st_ino`: the file's inode number on that device.
    package var inode: UInt64

    /// The identity of the file `path` names, following symbolic links; `nil` (with `errno`
    /// set) when it cannot be read.
    package init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The identity of the file open as `descriptor`; `nil` (with `errno` set) when it
    /// cannot be read.
    package init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }

    private init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
