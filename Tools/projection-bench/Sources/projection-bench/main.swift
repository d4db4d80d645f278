// Throughput (CPU time of the applying thread) and heap use (glibc malloc_stats "in use
// bytes") of the projection on the realistic workload of WorkloadGenerator.Profile.realistic.
import Foundation
import HeraldEvents
import HeraldProjection

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
var profile = WorkloadGenerator.Profile.realistic
if let small = environment["SMALL"].flatMap(Int.init) {
    profile.accounts = small
    profile.chatsPerAccount = small
}
let hotness = environment["HOTNESS"].flatMap(Int.init) ?? 1
let shortBodies = environment["SHORT"] != nil

func events(seed: UInt64) -> AnyIterator<Event> {
    var generator = WorkloadGenerator(seed: seed, profile: profile)
    generator.hotness = hotness
    var counter = 0
    return AnyIterator {
        var event = generator.next()
        counter += 1
        if case .notify(var n) = event.payload {
            n.title = "Sender \(counter % 97)"
            n.body = shortBodies ? "short" : "message text number \(counter) with some words"
            event.payload = .notify(n)
        }
        return event
    }
}

let only = environment["ONLY"]  // "memory", "replay", "floor" or "apply": run up to that phase (for profiling)

// Memory first, on a stream (each event freed after use), before anything else is allocated.
if only == nil || only == "memory" {
    var projection = Projection()
    let before = heapInUse() ?? 0
    var seq: UInt64 = 0
    for event in events(seed: 2).prefix(count) {
        seq += 1
        projection.replay(event, seq: seq)
    }
    projection.settleView()
    let stats = projection.statistics
    let used = (heapInUse() ?? 0) - before
    print(String(format: "memory: %.1f MB in use after %d events; %d live notifications -> %.1f bytes each (chats %d, groups %d, remembered objects %d, deletions %d)",
        Double(used) / 1e6, count, stats.liveNotifications, Double(used) / Double(max(1, stats.liveNotifications)),
        stats.chats, stats.groups, stats.rememberedObjects, stats.rememberedDeletions))
}

if only == "memory" { exit(0) }
let stream = Array(events(seed: 1).prefix(count))
// The stream's names interned ahead (untimed, as a decoder in front of the projection does
// on its own thread, and as the C limit's prep.py does): replays by id hash no name.
var interner = NameInterner(token: .random(in: 1...UInt64.max))
let names = stream.map { interner.names(of: $0) }
var applied = Projection()
var updates = 0
var start = cpuSeconds()
if only != "replay" {
// Indexing borrows each event; `for event in stream` would copy (retain) every string.
// Names interned ahead, as for the replays below and the C limit (NAMES=1: looked up per event).
if environment["NAMES"] != nil {
    for index in stream.indices {
        updates &+= applied.apply(stream[index], seq: UInt64(index + 1)).updates.count
    }
} else {
    for index in stream.indices {
        updates &+= applied.apply(stream[index], seq: UInt64(index + 1), names: names[index]).updates.count
    }
}
}
var elapsed = cpuSeconds() - start
if only != "replay" { print(String(format: "apply:  %d events in %.3f s CPU = %.2f M events/s (%d updates; names %@)", count, elapsed, Double(count) / elapsed / 1e6, updates, environment["NAMES"] != nil ? "looked up per event" : "interned ahead")) }
if only == "apply" { exit(0) }

var replayed = Projection()
start = cpuSeconds()
// INTERNED=1: names interned ahead, as the floor's replays and the C limit (for profiling
// the replay row of `Tools/bench.sh --limit` alone).
let internedReplay = environment["INTERNED"] != nil
if internedReplay {
    for index in stream.indices { replayed.replay(stream[index], seq: UInt64(index + 1), names: names[index]) }
} else {
    for index in stream.indices { replayed.replay(stream[index], seq: UInt64(index + 1)) }
}
replayed.settleView()
elapsed = cpuSeconds() - start
print(String(format: "replay: %d events in %.3f s CPU = %.2f M events/s (same state: %@; names %@)", count, elapsed, Double(count) / elapsed / 1e6, replayed == applied ? "yes" : "NO", internedReplay ? "interned ahead" : "looked up per event"))

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
    for index in stream.indices { again.replay(stream[index], seq: UInt64(index + 1), names: names[index]) }
    again.settleView()
    replaySeconds = min(replaySeconds, cpuSeconds() - start)
    if again != applied { print("interned replay: NOT the same state") }
}
print(String(format: "floor:  %d events in %.3f s CPU = %.2f M events/s (%d records held); replay (best of 4, names interned ahead) %.2f M events/s, %.1f× the floor's time",
    count, floorSeconds, Double(count) / floorSeconds / 1e6, held, Double(count) / replaySeconds / 1e6, replaySeconds / floorSeconds))
if only == "floor" { exit(0) }

// Batches of 10,000, as a bulk append replays them: two threads (accounts split between
// them), so the wall clock.
var batched = Projection()
let batchStart = DispatchTime.now().uptimeNanoseconds
var batchEnd = 0
while batchEnd < stream.count {
    let next = min(stream.count, batchEnd + 10_000)
    batched.replay(Array(stream[batchEnd..<next]), through: UInt64(next))
    batched.settleView()
    batchEnd = next
}
let batchedIn = Double(DispatchTime.now().uptimeNanoseconds - batchStart) / 1e9
print(String(format: "replay in batches of 10,000: %d events in %.3f s wall clock = %.2f M events/s (same state: %@)", count, batchedIn, Double(count) / batchedIn / 1e6, batched == applied ? "yes" : "NO"))
if only == "batch" { exit(0) }

start = cpuSeconds()
let snapshot = applied.snapshot()
let encoded = cpuSeconds() - start
// Restoring uses two threads for large snapshots: time it on the wall clock.
let wallStart = DispatchTime.now().uptimeNanoseconds
let restored = try! Projection(snapshot: snapshot)
let restoredIn = Double(DispatchTime.now().uptimeNanoseconds - wallStart) / 1e9
print(String(format: "snapshot: %d bytes, encoded in %.3f s CPU, restored in %.3f s (wall clock; equal: %@)", snapshot.count, encoded, restoredIn, restored == applied ? "yes" : "NO"))
