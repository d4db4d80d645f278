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

    /// What a directory entry is, without following a symbolic link; `nil` when missing.
    enum EntryKind { case file, directory, other }

    /// The kind of the entry at `path` (`lstat`).
    static func kind(_ path: String) -> EntryKind? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The names in directory `path`, but `.` and `..`, sorted; empty when it cannot be read.
    static func names(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Copies the plain file `source` to the new file `destination` (mode `mode`, never over
    /// an existing file), fsynced; returns the bytes copied.
    @discardableResult
    static func copyFile(_ source: String, to destination: String, mode: mode_t = 0o600) throws(StoreError) -> Int {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StoreError.system(path: source, operation: "open", errno: errno) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard output >= 0 else { throw StoreError.system(path: destination, operation: "open", errno: errno) }
        defer { close(output) }
        guard fchmod(output, mode) == 0 else { throw StoreError.system(path: destination, operation: "fchmod", errno: errno) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw StoreError.system(path: source, operation: "read", errno: errno) }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if step < 0 && errno == EINTR { continue }
                guard step > 0 else { throw StoreError.system(path: destination, operation: "write", errno: errno) }
                written += step
            }
            total += count
        }
        guard fsync(output) == 0 else { throw StoreError.system(path: destination, operation: "fsync", errno: errno) }
        return total
    }

    /// The absolute path of `path` with every symbolic link, `.` and `..` resolved
    /// (`realpath`); `nil` when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` made absolute against the working directory, with `.`, `..` and repeated
    /// slashes removed by name (symbolic links are kept, and the path need not exist).
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            full = String(cString: cwd) + "/" + path
            free(cwd)
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The directory part of `path` (`.` when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
