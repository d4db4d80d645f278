// Micro-benchmarks of Herald's hot paths (ordo-one/benchmark). Run in this directory with
// `swift package benchmark` (or `--filter codec` etc.).

import Benchmark
import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import HeraldWorkload

/// A fixed slice of the benchmark workload, shared by the benchmarks below.
let sample: [Event] = {
    var workload = Workload()
    return workload.next(10_000)
}()

let sampleBinary: [[UInt8]] = sample.map(\.binary)
let sampleJSON: [Data] = sample.map { Data($0.jsonString.utf8) }
let sampleProjection: Projection = {
    var projection = Projection()
    for (index, event) in sample.enumerated() { _ = projection.apply(event, seq: UInt64(index + 1)) }
    return projection
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )

    Benchmark("codec encode (Event.binary)") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(sample[i % sample.count].binary)
        }
    }

    Benchmark("codec decode (Event(binary:))") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try Event(binary: sampleBinary[i % sampleBinary.count]))
        }
    }

    Benchmark("log record encode (LogRecord.encoded)") { benchmark in
        for i in benchmark.scaledIterations {
            let record = LogRecord(seq: UInt64(i + 1), recordedAt: 1_700_000_000_000, source: .library, event: sample[i % sample.count])
            blackHole(record.encoded)
        }
    }

    Benchmark("JSON event decode (Event(json:))") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(try Event(json: sampleJSON[i % sampleJSON.count]))
        }
    }

    Benchmark("JSON event encode (jsonString)") { benchmark in
        for i in benchmark.scaledIterations {
            blackHole(sample[i % sample.count].jsonString)
        }
    }

    Benchmark("projection apply (10 k workload events)", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            var projection = Projection()
            for (index, event) in sample.enumerated() {
                blackHole(projection.apply(event, seq: UInt64(index + 1)))
            }
            blackHole(projection)
        }
    }

    snapshotBenchmarks()
}
