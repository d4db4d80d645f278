// projection-bench: the projection alone, on HeraldWorkload's stream (the one
// `herald-workload` prints): throughput (CPU time of the applying thread), heap use (glibc
// malloc_stats "in use bytes"), the floor (Floor.swift) and a snapshot round trip.
//
//   swift run -c release projection-bench [EVENTS]        (from Benchmarks/; default 1 000 000)
//
// Environment: SMALL=10 uses 10 accounts × 100 chats (`herald-workload --accounts 10 --chats
// 100`); SHORT=1 gives every notify the body "short"; ONLY=memory|apply|replay|floor|batch
// stops after that phase (for profiling, e.g. under callgrind).
import Foundation
import HeraldEvents
import HeraldProjection
import HeraldWorkload

func cpuSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// glibc's malloc_stats() prints "in use bytes" to stderr; read it back through a pipe.
func heapInUse() -> Int? {
    typealias MallocStats = @convention(c) () -> Void
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_stats") else { return nil }
    let pipe = Pipe()
    let saved = dup(2)
    dup2(pipe.fileHandleForWriting.fileDescriptor, 2)
    unsafeBitCast(symbol, to: MallocStats.self)()
    fflush(stderr)
    dup2(saved, 2)
    close(saved)
    try? pipe.fileHandleForWriting.close()
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let lines = text.split(separator: "\n").filter { $0.contains("in use bytes") }
    return lines.last.flatMap { Int($0.split(separator: "=").last!.trimmingCharacters(in: .whitespaces)) }
}

let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 1_000_000
let environment = ProcessInfo.processInfo.environment
var configuration = Workload.Configuration()
if let small = environment["SMALL"].flatMap(Int.init) {
    configuration = Workload.Configuration(accounts: small, chats: small * small)
}
let shortBodies = environment["SHORT"] != nil
let only = environment["ONLY"]

/// The workload's events, with seed `seed` (the benchmarks' default seed for the measured
/// stream, so that `herald-workload` prints the same events for the C limit).
func events(seed: UInt64) -> AnyIterator<Event> {
    var shape = configuration
    shape.seed = seed
    var workload = Workload(shape)
    return AnyIterator {
        var event = workload.next()
        if shortBodies, case .notify(var notify) = event.payload {
            notify.body = "short"
            event.payload = .notify(notify)
        }
        return event
    }
}

/// The events of `stream` with seqs from 1, as a batch (built untimed, as the store's decoding
/// thread builds its batches ahead of the replay).
func batch(_ stream: ArraySlice<Event>) -> ReplayBatch {
    var batch = ReplayBatch()
    for index in stream.indices { batch.append(stream[index], seq: UInt64(index + 1)) }
    return batch
}

// Memory first, on a stream of another seed, before anything else is allocated.
if only == nil || only == "memory" {
    var projection = Projection()
    let before = heapInUse() ?? 0
    var seq: UInt64 = 0
    var chunk = ReplayBatch()
    for event in events(seed: configuration.seed ^ 2).prefix(count) {
        seq += 1
        chunk.append(event, seq: seq)
        if chunk.count == 10_000 {
            projection.replay(chunk)
            chunk.removeAll()
        }
    }
    projection.replay(chunk)
    chunk = ReplayBatch()
    projection.settleView()
    let stats = projection.statistics
    let used = (heapInUse() ?? 0) - before
    print(String(format: "memory: %.1f MB in use after %d events; %d live notifications -> %.1f bytes each (chats %d, groups %d, remembered objects %d, deletions %d)",
        Double(used) / 1e6, count, stats.liveNotifications, Double(used) / Double(max(1, stats.liveNotifications)),
        stats.chats, stats.groups, stats.rememberedObjects, stats.rememberedDeletions))
}
if only == "memory" { exit(0) }

let stream = Array(events(seed: configuration.seed).prefix(count))
var applied = Projection()
var updates = 0
var start = cpuSeconds()
if only != "replay" {
    // Indexing borrows each event; `for event in stream` would copy (retain) every string.
    for index in stream.indices {
        updates &+= applied.apply(stream[index], seq: UInt64(index + 1)).updates.count
    }
}
var elapsed = cpuSeconds() - start
if only != "replay" { print(String(format: "apply:  %d events in %.3f s CPU = %.2f M events/s (%d updates)", count, elapsed, Double(count) / elapsed / 1e6, updates)) }
if only == "apply" { exit(0) }

let whole = batch(stream[...])
var replayed = Projection()
start = cpuSeconds()
replayed.replay(whole)
replayed.settleView()
elapsed = cpuSeconds() - start
let same = only == "replay" ? "not checked" : replayed == applied ? "yes" : "NO"
print(String(format: "replay: %d events in %.3f s CPU = %.2f M events/s (same state: %@)", count, elapsed, Double(count) / elapsed / 1e6, same))
if only == "replay" { exit(0) }

// The floor (Floor.swift) on the same events, interleaved with replays of them, best of
// three each: the machine's speed drifts, so only figures from one run compare.
var floorSeconds = Double.infinity
var replaySeconds = elapsed
var held = 0
for _ in 0..<3 {
    var floor = Floor()
    start = cpuSeconds()
    for index in stream.indices { floor.apply(stream[index]) }
    floorSeconds = min(floorSeconds, cpuSeconds() - start)
    held = floor.held
    var again = Projection()
    start = cpuSeconds()
    again.replay(whole)
    again.settleView()
    replaySeconds = min(replaySeconds, cpuSeconds() - start)
    if again != applied { print("replay: NOT the same state") }
}
print(String(format: "floor:  %d events in %.3f s CPU = %.2f M events/s (%d records held); replay (best of 4) %.2f M events/s, %.1f× the floor's time",
    count, floorSeconds, Double(count) / floorSeconds / 1e6, held, Double(count) / replaySeconds / 1e6, replaySeconds / floorSeconds))
if only == "floor" { exit(0) }

// Batches of 10,000 built and replayed in turn, as a bulk append replays them.
var batched = Projection()
let batchStart = DispatchTime.now().uptimeNanoseconds
var batchEnd = 0
while batchEnd < stream.count {
    let next = min(stream.count, batchEnd + 10_000)
    batched.replay(batch(stream[batchEnd..<next]))
    batched.settleView()
    batchEnd = next
}
let batchedIn = Double(DispatchTime.now().uptimeNanoseconds - batchStart) / 1e9
print(String(format: "replay in batches of 10,000: %d events in %.3f s wall clock = %.2f M events/s (same state: %@)", count, batchedIn, Double(count) / batchedIn / 1e6, batched == applied ? "yes" : "NO"))
if only == "batch" { exit(0) }

start = cpuSeconds()
let snapshot = applied.snapshot()
let encoded = cpuSeconds() - start
let wallStart = DispatchTime.now().uptimeNanoseconds
let restored = try! Projection(snapshot: snapshot)
let restoredIn = Double(DispatchTime.now().uptimeNanoseconds - wallStart) / 1e9
print(String(format: "snapshot: %d bytes, encoded in %.3f s CPU, restored in %.3f s (wall clock; equal: %@)", snapshot.count, encoded, restoredIn, restored == applied ? "yes" : "NO"))
