import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import LMDB
import Synchronization
import Testing

/// The projection of `events` given seqs 1, 2, 3…, computed in memory: the reference every
/// restored state must equal.
func referenceProjection(_ events: some Sequence<Event>, skipping skipped: (Event) -> Bool = { _ in false }) -> Projection {
    var projection = Projection()
    for (index, event) in events.enumerated() where !skipped(event) {
        _ = projection.apply(event, seq: UInt64(index + 1))
    }
    return projection
}

/// Options for tests that do not need fsync: a process crash still loses nothing.
func fastOptions(snapshotInterval: UInt64 = 0) -> Store.Options {
    var options = Store.Options()
    options.durability = .noSync
    options.snapshotInterval = snapshotInterval
    return options
}

/// ``fastOptions(snapshotInterval:)`` with a clock that records one event per second from
/// t = 1000 s (each reading is one second after the last).
func fastOptionsRecordingEachSecond() -> Store.Options {
    let tick = Mutex<Int64>(1_000_000)
    var options = fastOptions()
    options.clock = { tick.withLock { $0 += 1_000; return $0 } }
    return options
}

/// Every regular file under `directory`, recursively.
func filesUnder(_ directory: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: directory)
    var files: [String] = []
    while let relative = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let path = directory + "/" + relative
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(path)
        }
    }
    return files
}

/// Whether `needle` occurs in the file at `path`.
func file(_ path: String, contains needle: [UInt8]) -> Bool {
    guard let data = FileManager.default.contents(atPath: path) else { return false }
    return offset(of: needle, in: [UInt8](data)) != nil
}

/// The first offset of `needle` in `haystack`.
func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
    }
    return nil
}

/// Flips one byte of the file at `path`, at `offset`.
func flipByte(in path: String, at offset: Int, mask: UInt8 = 0x5A) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: UInt64(offset))
    let old = try handle.read(upToCount: 1)![0]
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: [old ^ mask])
}

/// The stored bytes of log record `seq`.
func storedBytes(of seq: UInt64, in store: Store) throws -> [UInt8] {
    var bytes: [UInt8] = []
    try store.history.forEachRawLogRecord(from: seq, through: seq) { _, raw in bytes = Array(raw); return false }
    return bytes
}

/// The built `herald` executable: next to the test bundle, or in `.build/debug` of this
/// package. `nil` (with an issue recorded) when it has not been built.
func heraldExecutable() -> String? {
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let bundle = Bundle.main.bundleURL
    let candidates = [
        bundle.appendingPathComponent("herald"),
        bundle.deletingLastPathComponent().appendingPathComponent("herald"),
        packageRoot.appendingPathComponent(".build/debug/herald"),
        packageRoot.appendingPathComponent(".build/release/herald"),
    ].map(\.path)
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
    Issue.record("the herald executable is not built (looked in \(candidates)); run `swift build` first")
    return nil
}
