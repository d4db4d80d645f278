import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import HeraldWorkload

/// The Herald side of each measurement. Every function writes its store under `directory`
/// and leaves it there for the caller to reuse or remove.
enum Herald {
    /// Batched appends of `count` workload events through the library (`Store.appendBatch`:
    /// projection updated, seqs returned), `batchSize` per call, one commit per call. Only the `append` calls are timed; the
    /// events are generated between them. Returns the seconds spent appending.
    static func batchedAppend(directory: String, count: Int, batchSize: Int, seed: UInt64) throws -> Double {
        let store = try Store(path: directory, options: storeOptions())
        var workload = Workload(Workload.Configuration(seed: seed))
        var elapsed = 0.0
        var done = 0
        var batch: [(Event, Source)] = []
        batch.reserveCapacity(batchSize)
        while done < count {
            let size = min(batchSize, count - done)
            batch.removeAll(keepingCapacity: true)
            for _ in 0..<size { batch.append((workload.next(), .library)) }
            let start = now()
            try store.appendBatch(batch)
            elapsed += now() - start
            done += size
            if count >= 1_000_000 && done % 1_000_000 == 0 { note("  appended \(done.short) events") }
        }
        return elapsed
    }

    /// The average stored size of a record (value bytes, without the 8-byte key).
    static func averageRecordSize(directory: String) throws -> Double {
        let store = try Store(path: directory, options: readOnlyOptions())
        var total = 0
        var count = 0
        try store.history.forEach { record in
            total += record.encoded.count
            count += 1
            return true
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }

    /// `count` appends of one event each, one producer, each durable when it returns.
    static func singleAppends(directory: String, count: Int, seed: UInt64) throws -> Double {
        let store = try Store(path: directory, options: storeOptions())
        var workload = Workload(Workload.Configuration(seed: seed))
        let events = workload.next(count)
        let start = now()
        for event in events { try store.append(event) }
        return now() - start
    }

    /// `producers` threads appending `perProducer` events each, one event per call, each call
    /// durable when it returns (they share commits through group commit).
    static func concurrentAppends(directory: String, producers: Int, perProducer: Int, seed: UInt64) throws -> Double {
        let store = try Store(path: directory, options: storeOptions())
        var workload = Workload(Workload.Configuration(seed: seed))
        // Round-robin the stream over the producers so each account still sees its events
        // roughly in order.
        var streams = Array(repeating: [Event](), count: producers)
        for i in 0..<(producers * perProducer) { streams[i % producers].append(workload.next()) }
        let group = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        let failures = Failures()
        for events in streams {
            group.enter()
            let thread = Thread {
                gate.wait()
                do {
                    for event in events { try store.append(event) }
                } catch {
                    failures.add(error)
                }
                group.leave()
            }
            thread.start()
        }
        Thread.sleep(forTimeInterval: 0.05)
        let start = now()
        for _ in 0..<producers { gate.signal() }
        group.wait()
        let elapsed = now() - start
        if let error = failures.first { throw error }
        let committed = try store.history.bounds().recordCountInLog
        guard committed == producers * perProducer else {
            throw BenchError("concurrent appends committed \(committed) records, expected \(producers * perProducer)")
        }
        return elapsed
    }

    /// Writes `count` workload events as canonical JSONL to `path`.
    static func writeJSONL(path: String, count: Int, seed: UInt64) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { throw BenchError("cannot write \(path)") }
        defer { try? handle.close() }
        var workload = Workload(Workload.Configuration(seed: seed))
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        for _ in 0..<count {
            buffer.append(contentsOf: workload.next().jsonString.utf8)
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= 1 << 20 {
                handle.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer))
    }

    /// Takes a snapshot of the store in `directory` now, then appends `tail` more events
    /// (continuing the stream of `seed` after `already` events): a log whose newest snapshot
    /// is exactly `tail` events behind its end. Returns the snapshot's seq.
    static func snapshotThenTail(directory: String, already: Int, tail: Int, seed: UInt64) throws -> UInt64 {
        let store = try Store(path: directory, options: storeOptions())
        let seq = try store.snapshot()
        var workload = Workload(Workload.Configuration(seed: seed))
        for _ in 0..<already { _ = workload.next() }
        var done = 0
        while done < tail {
            let size = min(10_000, tail - done)
            try store.append(contentsOf: workload.next(size).map { ($0, Source.library) })
            done += size
        }
        return seq
    }

    /// Compaction: a log of `count` events with one snapshot at 90 %, compacted up to it.
    /// Returns the data file size afterwards, the bytes of the live records (key + value) and
    /// the snapshot's size.
    static func compaction(directory: String, count: Int, seed: UInt64) throws -> (file: Int, liveRecords: Int, snapshot: Int, report: CompactionReport) {
        var options = storeOptions()
        options.snapshotInterval = 0
        var snapshotBytes = 0
        do {
            let store = try Store(path: directory, options: options)
            var workload = Workload(Workload.Configuration(seed: seed))
            let covered = count * 9 / 10
            var done = 0
            while done < count {
                if done == covered {
                    try store.snapshot()
                    snapshotBytes = store.projection.snapshot().count
                }
                let size = min(10_000, (done < covered ? covered : count) - done)
                try store.append(contentsOf: workload.next(size).map { ($0, Source.library) })
                done += size
            }
        }
        // The row measures the data file left after dropping the covered records, as it
        // always has: compaction now archives by default, so ask for the discard.
        let report = try StoreMaintenance(path: directory, options: options).compact(discardingHistory: true)
        let store = try Store(path: directory, options: readOnlyOptions())
        var liveRecords = 0
        try store.history.forEach { record in
            liveRecords += record.encoded.count + 8
            return true
        }
        return (report.bytesAfter, liveRecords, snapshotBytes, report)
    }

    static func storeOptions() -> Store.Options {
        var options = Store.Options()
        options.initialMapSize = 1 << 30
        return options
    }

    static func readOnlyOptions() -> Store.Options {
        var options = Store.Options()
        options.readOnly = true
        options.replayOnOpen = false
        return options
    }
}

/// What the `rebuild` child reports.
struct RebuildReport {
    var seconds: Double
    var cpuSeconds: Double
    var events: Int
    var live: Int
    var anonymousBefore: Int
    var anonymousPeak: Int
    var highWaterBefore: Int
    var highWaterAfter: Int

    var eventsPerSecond: Double { Double(events) / seconds }
    var bytesPerLive: Double { live == 0 ? .nan : Double(anonymousPeak - anonymousBefore) / Double(live) }

    init(_ pairs: [String: String]) throws {
        func value(_ key: String) throws -> Double {
            guard let text = pairs[key], let number = Double(text) else { throw BenchError("rebuild child did not report \(key)") }
            return number
        }
        seconds = try value("seconds")
        cpuSeconds = try value("cpu")
        events = Int(try value("events"))
        live = Int(try value("live"))
        anonymousBefore = Int(try value("anonBefore"))
        anonymousPeak = Int(try value("anonPeak"))
        highWaterBefore = Int(try value("hwmBefore"))
        highWaterAfter = Int(try value("hwmAfter"))
    }
}

/// The `rebuild` child: opens the store cold (replaying the whole log) and reports the time,
/// the live notifications and the memory it took, as `key=value` pairs on stdout.
func rebuildChild(directory: String, useSnapshots: Bool) throws {
    let highWaterBefore = procStatus("VmHWM")
    let anonymousBefore = procStatus("RssAnon")
    let sampler = AnonymousMemorySampler()
    var options = Store.Options()
    options.create = false
    // A restart is an application's: a writable open, which checks the meta pages and the
    // file's size but does not walk every page as a read-only open of a copied store does
    // (that walk reads the whole file: 0.5 s of the 10 M-event restart). The full rebuild
    // stays a read-only open: it reads every record anyway.
    options.readOnly = !useSnapshots
    options.useSnapshots = useSnapshots
    let cpuStart = cpuTime()
    let start = now()
    let store = try Store(path: directory, options: options)
    let seconds = now() - start
    let cpuSeconds = cpuTime() - cpuStart
    let anonymousPeak = sampler.stop()
    let highWaterAfter = procStatus("VmHWM")
    let live = store.projection.statistics.liveNotifications
    let events = try store.history.bounds().recordCountInLog
    print("seconds=\(seconds) cpu=\(cpuSeconds) events=\(events) live=\(live) anonBefore=\(anonymousBefore) anonPeak=\(anonymousPeak) hwmBefore=\(highWaterBefore) hwmAfter=\(highWaterAfter)")
}

/// Errors from concurrent producers, collected under a lock.
final class Failures: @unchecked Sendable {
    // @unchecked: `errors` is only touched with `lock` held.
    private let lock = NSLock()
    private var errors: [any Error] = []
    func add(_ error: any Error) { lock.withLock { errors.append(error) } }
    var first: (any Error)? { lock.withLock { errors.first } }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
