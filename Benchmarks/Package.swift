// swift-tools-version: 6.1
// Herald's benchmarks: micro-benchmarks (ordo-one/benchmark), the workload generator, the
// projection alone (`projection-bench`) and the macro benchmark that checks every target of
// `../shared/bench/README.md` against raw LMDB and SQLite measured in the same run. A separate
// package, so CI (`swift test` at the root) never builds it. Run everything with
// `Tools/bench.sh [--quick]` from the repository root.
import PackageDescription

let package = Package(
    name: "HeraldBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Herald", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Seeded, deterministic canonical event streams shaped like real traffic.
        .target(
            name: "HeraldWorkload",
            dependencies: [.product(name: "HeraldEvents", package: "Herald")]
        ),
        // `herald-workload --events N [--seed S]`: the workload as canonical JSONL on stdout.
        .executableTarget(
            name: "herald-workload",
            dependencies: ["HeraldWorkload", .product(name: "HeraldEvents", package: "Herald")]
        ),
        // `herald-bench`: the macro benchmark; prints one table of targets, figures and baselines.
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldWorkload",
                .product(name: "HeraldEvents", package: "Herald"),
                .product(name: "HeraldProjection", package: "Herald"),
                .product(name: "HeraldStore", package: "Herald"),
            ]
        ),
        // `projection-bench [EVENTS]`: the projection alone on the workload (apply, replay of a
        // `ReplayBatch`, memory, its floor, a snapshot round trip), through its public API.
        .executableTarget(
            name: "projection-bench",
            dependencies: [
                "HeraldWorkload",
                .product(name: "HeraldEvents", package: "Herald"),
                .product(name: "HeraldProjection", package: "Herald"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Micro-benchmarks: `swift package benchmark` in this directory.
        .executableTarget(
            name: "HeraldMicro",
            dependencies: [
                "HeraldWorkload",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "HeraldEvents", package: "Herald"),
                .product(name: "HeraldProjection", package: "Herald"),
                .product(name: "HeraldStore", package: "Herald"),
            ],
            path: "Benchmarks/HeraldMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
