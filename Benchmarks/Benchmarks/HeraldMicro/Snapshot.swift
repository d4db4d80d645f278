import Benchmark
import HeraldProjection

/// Snapshot encode and decode of the projection after the 10 k-event sample.
func snapshotBenchmarks() {
    Benchmark("snapshot encode (10 k-event projection)", configuration: .init(scalingFactor: .one)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(sampleProjection.snapshot())
        }
    }

    Benchmark("snapshot decode (10 k-event projection)", configuration: .init(scalingFactor: .one)) { benchmark in
        let bytes = sampleProjection.snapshot()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try Projection(snapshot: bytes))
        }
    }
}
