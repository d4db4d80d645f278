// Snapshot encode/decode benchmarks: they need `Projection.snapshot()`, which arrives with
// the projection work; until then this registers nothing.
func snapshotBenchmarks() {}
