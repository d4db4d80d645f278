#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations that compaction and purge need to swap a data file in
/// crash-safely: fsync a file or a directory, rename atomically, remove leftovers.
enum FileSystem {
    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The size of the file at `path` in bytes, 0 when it does not exist.
    static func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Flushes a file's (or a directory's) contents and metadata to disk.
    static func sync(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.system(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.system(path: path, operation: "fsync", errno: errno) }
    }

    /// Atomically replaces `destination` with `source` (same file system), then makes the
    /// rename durable by syncing the directory that holds `destination`.
    static func replace(_ destination: String, with source: String) throws(StoreError) {
        // LMDB creates a copy's file 0666 less the umask; a store's files are 0600.
        _ = chmod(source, 0o600)
        guard rename(source, destination) == 0 else {
            throw StoreError.system(path: destination, operation: "rename", errno: errno)
        }
        try sync(directory(of: destination))
    }

    /// Creates directory `path` (mode 0700: a store holds credentials, see `keys`); an
    /// existing one is fine.
    static func makeDirectory(_ path: String) throws(StoreError) {
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw StoreError.system(path: path, operation: "mkdir", errno: errno)
        }
    }

    /// Creates `path` and any missing parents (`mkdir -p`).
    static func makeDirectories(_ path: String) throws(StoreError) {
        if exists(path) { return }
        let parent = directory(of: path)
        if !parent.isEmpty && parent != path { try makeDirectories(parent) }
        try makeDirectory(path)
    }

    /// Removes a file, or a directory with the plain files in it; a missing path is fine.
    static func remove(_ path: String) throws(StoreError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if let dir = opendir(path) {
                while let entry = readdir(dir) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                    }
                    if name == "." || name == ".." { continue }
                    try remove(path + "/" + name)
                }
                closedir(dir)
            }
            guard rmdir(path) == 0 else { throw StoreError.system(path: path, operation: "rmdir", errno: errno) }
        } else {
            guard unlink(path) == 0 || errno == ENOENT else {
                throw StoreError.system(path: path, operation: "unlink", errno: errno)
            }
        }
    }

    /// The directory part of `path` (`.` when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
