import Foundation
import Synchronization
import HeraldEvents
import HeraldProjection
import HeraldStore
import Testing

#if canImport(Glibc)
import Glibc
import HeraldTestSupport
#endif

/// Kills `herald` child processes with SIGKILL at random moments and checks what survives.
/// `HERALD_CRASH_KILLS` sets the number of ingest kills (default 50; `Tools/crash-test.sh`
/// runs 1,000); compaction and snapshot kills are a quarter of that, at least 12.
@Suite("Crash recovery", .serialized, .processThreads)
struct CrashTests {
    static var kills: Int {
        ProcessInfo.processInfo.environment["HERALD_CRASH_KILLS"].flatMap { Int($0) } ?? 50
    }

    /// Starts `herald` with `arguments`, feeding `input` on stdin from a helper thread.
    func launch(_ herald: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws
        -> (Process, Pipe)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: herald)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let descriptor = stdin.fileHandleForWriting.fileDescriptor
        Thread {
            input.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written <= 0 { break }  // EPIPE once the child is dead (SIGPIPE is ignored)
                    offset += written
                }
            }
            try? stdin.fileHandleForWriting.close()
        }.start()
        return (process, stdout)
    }

    /// Collects a child's stdout on a helper thread; `firstOutput` is signalled at the first bytes.
    final class OutputCollector: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let firstOutput = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)

        init(_ pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            Thread { [self] in
                var signalled = false
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    bytes.withLock { $0 += chunk }
                    if !signalled { signalled = true; firstOutput.signal() }
                }
                if !signalled { firstOutput.signal() }
                finished.signal()
            }.start()
        }

        var text: String {
            finished.wait()
            return bytes.withLock { String(decoding: $0, as: UTF8.self) }
        }
    }

    func killAfter(_ process: Process, microseconds: UInt32) {
        usleep(microseconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test("a SIGKILLed ingest loses no acknowledged event; seqs stay contiguous; state equals a replay")
    func killIngest() throws {
        guard let herald = heraldExecutable() else { return }
        signal(SIGPIPE, SIG_IGN)
        let dir = TemporaryDirectory()
        let path = dir.child("store")
        let events = randomEvents(count: 200_000, seed: 77)
        var rng = SplitMix64(seed: 77)
        var acknowledged: UInt64 = 0
        var present = 0
        // Advanced as the log grows, so each round costs what it adds, not the whole history
        // (`Tools/crash-test.sh` runs 1,000 rounds).
        var reference = Projection()
        for round in 0..<Self.kills {
            let lines = events[present..<min(present + 250, events.count)].map { $0.jsonString + "\n" }.joined()
            let (process, stdout) = try launch(
                herald, ["ingest", "--store", path, "--batch-size", "1", "--print-seqs", "--quiet", "-"],
                input: Array(lines.utf8), environment: ["HERALD_SNAPSHOT_INTERVAL": "16"])
            // The process takes a while to start; the random moment counts from its first ack.
            let collector = OutputCollector(stdout)
            _ = collector.firstOutput.wait(timeout: .now() + 10)
            killAfter(process, microseconds: UInt32.random(in: 0...60_000, using: &rng))
            let output = collector.text
            for line in output.split(separator: "\n") where line.hasPrefix("ack ") {
                acknowledged = max(acknowledged, UInt64(line.dropFirst(4)) ?? 0)
            }
            let store = try Store(path: path, options: fastOptions())
            // Records before `present` were checked in earlier rounds and LMDB never rewrites
            // them; `verify` below rereads the whole log every tenth round.
            let added = try store.history.records(from: UInt64(present) + 1)
            let count = try store.history.bounds().recordCountInLog
            #expect(count == present + added.count, "round \(round): \(count) records, \(present) + \(added.count) expected")
            #expect(added.map(\.seq) == (0..<added.count).map { UInt64(present + 1 + $0) }, "round \(round)")
            #expect(UInt64(count) >= acknowledged, "round \(round): acknowledged \(acknowledged), found \(count)")
            #expect(added.map(\.event) == Array(events[present..<(present + added.count)]), "round \(round)")
            for (offset, event) in events[present..<(present + added.count)].enumerated() {
                _ = reference.apply(event, seq: UInt64(present + 1 + offset))
            }
            #expect(store.projection == reference, "round \(round)")
            if round % 10 == 9 || round == Self.kills - 1 {
                let report = try store.verify()
                #expect(report.isClean, "round \(round): \(report.problems)")
            }
            present += added.count
        }
        #expect(acknowledged > 0)
    }

    @Test("a SIGKILLed compaction or snapshot leaves a valid store with the whole history")
    func killCompaction() throws {
        guard let herald = heraldExecutable() else { return }
        signal(SIGPIPE, SIG_IGN)
        let dir = TemporaryDirectory()
        let path = dir.child("store")
        let rounds = max(12, Self.kills / 4)
        let events = randomEvents(count: rounds * 700, seed: 78)  // 700 appended per round
        var rng = SplitMix64(seed: 78)
        var written = 0
        var duration: [String: Double] = [:]  // of an unkilled run, per command
        var reference = Projection()
        for round in 0..<rounds {
            let before = written
            do {
                let store = try Store(path: path, options: fastOptions())
                try store.append(contentsOf: events[written..<(written + 600)].map { ($0, .library) })
                written += 600
                try store.snapshot()
                try store.append(contentsOf: events[written..<(written + 100)].map { ($0, .library) })
                written += 100
                try store.sync()
            }
            let arguments = round % 3 == 2 ? ["snapshot", "--store", path] : ["compact", "--archive", "--store", path]
            let started = Date()
            let (process, _) = try launch(herald, arguments)
            if let full = duration[arguments[0]] {
                // Most of a run is process start-up: aim at its end, where the work happens.
                killAfter(process, microseconds: UInt32(full * Double.random(in: 0.75...1.05, using: &rng) * 1e6))
            } else {
                process.waitUntilExit()
                duration[arguments[0]] = Date().timeIntervalSince(started)
            }
            let store = try Store(path: path, options: fastOptions())
            #expect(store.lastSeq == UInt64(written))
            for seq in (before + 1)...written { _ = reference.apply(events[seq - 1], seq: UInt64(seq)) }
            #expect(store.projection == reference, "round \(round)")
            var seqs: [UInt64] = []
            try store.history.forEach { seqs.append($0.seq); return true }
            #expect(seqs == Array(1...UInt64(written)), "round \(round)")
            let report = try store.verify()
            #expect(report.isClean, "round \(round): \(report.problems)")
        }
    }
}
