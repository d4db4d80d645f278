import CZlib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one gzip file durably (zlib's `gzdopen`/`gzwrite`): into a temporary name in the
/// target directory, then ``finish(as:)`` closes the gzip stream, fsyncs the file, renames
/// it to its final name and fsyncs the directory. A writer dropped before `finish` removes
/// its temporary file, so nothing half-written ever carries a final name.
final class GzipFileWriter {
    /// The directory the file is written in.
    let directory: String
    /// The temporary file, `directory/.NAME.partial`.
    let temporaryPath: String
    /// Uncompressed bytes written so far.
    private(set) var uncompressedBytes = 0
    private let descriptor: Int32
    private var file: gzFile?

    /// Creates (replacing a leftover) `directory/.name.partial`, mode 0600, for writing.
    init(directory: String, temporaryName: String) throws(StoreError) {
        self.directory = directory
        temporaryPath = directory + "/." + temporaryName + ".partial"
        try FileSystem.makeDirectories(directory)
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreError.system(path: temporaryPath, operation: "open", errno: errno) }
        // zlib closes the descriptor it is given in gzclose; it gets a duplicate, so that
        // this one stays open for the fsync after the stream is finished.
        let duplicate = dup(descriptor)
        file = duplicate >= 0 ? gzdopen(duplicate, "wb6") : nil
        guard file != nil else {
            let code = errno
            if duplicate >= 0 { close(duplicate) }
            close(descriptor)
            unlink(temporaryPath)
            throw StoreError.system(path: temporaryPath, operation: "gzdopen", errno: code)
        }
    }

    /// Compresses and writes `bytes`.
    func write(_ bytes: [UInt8]) throws(StoreError) {
        guard !bytes.isEmpty, let file else { return }
        let written = bytes.withUnsafeBytes { raw in gzwrite(file, raw.baseAddress, UInt32(raw.count)) }
        guard written == Int32(bytes.count) else { throw StoreError.system(path: temporaryPath, operation: "gzwrite", errno: errno == 0 ? EIO : errno) }
        uncompressedBytes += bytes.count
    }

    /// Ends the gzip stream, makes the file durable and renames it to `directory/name`
    /// (atomic, the directory fsynced); returns the compressed size in bytes.
    func finish(as name: String) throws(StoreError) -> Int {
        guard let file else { throw StoreError.system(path: temporaryPath, operation: "gzclose", errno: EBADF) }
        self.file = nil
        guard gzclose(file) == Z_OK else { throw StoreError.system(path: temporaryPath, operation: "gzclose", errno: errno == 0 ? EIO : errno) }
        guard fsync(descriptor) == 0 else { throw StoreError.system(path: temporaryPath, operation: "fsync", errno: errno) }
        let size = FileSystem.size(temporaryPath)
        try FileSystem.replace(directory + "/" + name, with: temporaryPath)
        return size
    }

    deinit {
        if let file {
            gzclose(file)
            unlink(temporaryPath)
        }
        close(descriptor)
    }
}

extension GzipFileWriter {
    /// The decompressed contents of the gzip file at `path` (concatenated members included),
    /// for checking an export.
    static func contents(of path: String) throws(StoreError) -> [UInt8] {
        guard let file = gzopen(path, "rb") else { throw StoreError.system(path: path, operation: "gzopen", errno: errno) }
        defer { gzclose(file) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in gzread(file, raw.baseAddress, UInt32(raw.count)) }
            guard count >= 0 else { throw StoreError.system(path: path, operation: "gzread", errno: EIO) }
            if count == 0 { return result }
            result.append(contentsOf: chunk[..<Int(count)])
        }
    }
}
