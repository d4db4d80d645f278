// herald-bench: the macro benchmark. Measures every target of Benchmarks/Baselines/README.md on
// the generated workload, runs the raw LMDB and SQLite baselines in the same run at Herald's
// record size, and prints one table. `Tools/bench.sh [--quick]` builds everything and runs it.
//
//   herald-bench run --herald PATH --lmdb-baseline PATH --sqlite-baseline PATH [--quick]
//                    [--events N] [--single N] [--concurrent-per-producer N] [--ingest-lines N]
//                    [--repeat R] [--tmp DIR]
//   herald-bench rebuild --store DIR [--snapshots]
//       (child: cold open, replaying the whole log or from the newest snapshot; key=value report)
//   herald-bench populate --store DIR --events N [--tail T]   (a store for profiling)

import Foundation
import HeraldStore

struct Settings {
    var herald = ""
    var lmdbBaseline = ""
    var sqliteBaseline = ""
    var quick = false
    var events = 10_000_000
    var single = 5_000
    var producers = 8
    var perProducer = 2_500
    var ingestLines = 1_000_000
    /// Events behind the newest snapshot in the restart measurement.
    var restartTail = 10_000
    /// The log compacted in the compaction measurement.
    var compactionEvents = 1_000_000
    var batchSize = 10_000
    /// Repetitions of the large measurements (best one kept); small ones always run 3 times.
    var repeats = 1
    var seed: UInt64 = 0x4845_5241_4C44
    var temporary = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"

    mutating func applyQuick() {
        quick = true
        events = 200_000
        single = 2_000
        perProducer = 500
        ingestLines = 200_000
        compactionEvents = 200_000
        repeats = 2
    }
}

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: herald-bench run --herald PATH --lmdb-baseline PATH --sqlite-baseline PATH [--quick]
                                [--events N] [--single N] [--concurrent-per-producer N]
                                [--ingest-lines N] [--compaction-events N] [--repeat R] [--tmp DIR]
               herald-bench rebuild --store DIR [--snapshots]
               herald-bench populate --store DIR --events N [--tail T]

        """.utf8))
    exit(2)
}

func parseSettings(_ arguments: ArraySlice<String>) -> Settings {
    var settings = Settings()
    if arguments.contains("--quick") { settings.applyQuick() }
    var rest = arguments
    while let flag = rest.popFirst() {
        if flag == "--quick" { continue }
        guard let value = rest.popFirst() else { usage() }
        switch flag {
        case "--herald": settings.herald = value
        case "--lmdb-baseline": settings.lmdbBaseline = value
        case "--sqlite-baseline": settings.sqliteBaseline = value
        case "--events": settings.events = Int(value) ?? { usage() }()
        case "--single": settings.single = Int(value) ?? { usage() }()
        case "--concurrent-per-producer": settings.perProducer = Int(value) ?? { usage() }()
        case "--ingest-lines": settings.ingestLines = Int(value) ?? { usage() }()
        case "--compaction-events": settings.compactionEvents = Int(value) ?? { usage() }()
        case "--tmp": settings.temporary = value
        case "--repeat": settings.repeats = max(1, Int(value) ?? { usage() }())
        default: usage()
        }
    }
    guard !settings.herald.isEmpty, !settings.lmdbBaseline.isEmpty, !settings.sqliteBaseline.isEmpty else { usage() }
    return settings
}

var arguments = CommandLine.arguments.dropFirst()
switch arguments.popFirst() {
case "rebuild":
    let useSnapshots = arguments.contains("--snapshots")
    arguments.removeAll { $0 == "--snapshots" }
    guard arguments.count == 2, arguments.first == "--store" else { usage() }
    do {
        try rebuildChild(directory: arguments.last!, useSnapshots: useSnapshots)
    } catch {
        FileHandle.standardError.write(Data("rebuild failed: \(error)\n".utf8))
        exit(1)
    }
case "populate":
    // `populate --store DIR --events N [--tail T]`: a store of N workload events (batched), for
    // profiling; with `--tail`, then a snapshot and T more events (the restart measurement's store).
    var flags: [String: String] = [:]
    while let flag = arguments.popFirst() {
        guard ["--store", "--events", "--tail"].contains(flag), flags[flag] == nil, let value = arguments.popFirst() else { usage() }
        flags[flag] = value
    }
    guard let directory = flags["--store"], let count = flags["--events"].flatMap({ Int($0) }) else { usage() }
    let tail = flags["--tail"].map { Int($0) ?? { usage() }() } ?? 0
    do {
        let seconds = try Herald.batchedAppend(directory: directory, count: count, batchSize: 10_000, seed: Settings().seed)
        print("appended \(count) events in \(seconds.fixed2) s")
        if tail > 0 {
            let seq = try Herald.snapshotThenTail(directory: directory, already: count, tail: tail, seed: Settings().seed)
            print("snapshot at seq \(seq), then \(tail) events")
        }
    } catch {
        FileHandle.standardError.write(Data("populate failed: \(error)\n".utf8))
        exit(1)
    }
case "producers":
    // `producers --store DIR N PER`: N threads appending PER durable events each; prints the
    // rate and how many events each commit carried on average (group commit at work).
    guard arguments.count == 4, arguments.first == "--store", let producers = Int(arguments[arguments.startIndex + 2]),
        let per = Int(arguments.last!) else { usage() }
    do {
        let directory = arguments[arguments.startIndex + 1]
        let seconds = try Herald.concurrentAppends(directory: directory, producers: producers, perProducer: per, seed: Settings().seed)
        let commits = try Store(path: directory, options: Herald.readOnlyOptions()).environmentInfo().lastTransactionId
        print("\(producers)×\(per) durable appends in \(seconds.fixed2) s: \(Int(Double(producers * per) / seconds)) events/s, \(commits) commits, \(String(format: "%.1f", Double(producers * per) / Double(max(commits, 1)))) events per commit")
    } catch {
        FileHandle.standardError.write(Data("producers failed: \(error)\n".utf8))
        exit(1)
    }
case "run":
    let settings = parseSettings(arguments)
    do {
        try Runner(settings).run()
    } catch {
        FileHandle.standardError.write(Data("herald-bench: \(error)\n".utf8))
        exit(1)
    }
default:
    usage()
}
