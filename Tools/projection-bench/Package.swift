// swift-tools-version: 6.1
// A standalone package (not part of the root build): the projection's throughput and memory
// on generated workloads. Run from this directory:
//   swift run -c release projection-bench 1000000
// Environment: HOTNESS=3 skews accounts and chats towards a few busy ones; SMALL=10 uses
// 10 accounts x 10 chats; SHORT=1 uses short (inline) bodies instead of unique 40-byte ones;
// NAMES=1 makes the apply phase look names up per event (default: interned ahead, as the C
// limit and the replays do); ONLY=memory|apply|replay|floor stops after that phase (floor: the least work per event,
// Floor.swift, interleaved with replays of the same events).
import PackageDescription

let package = Package(
    name: "projection-bench",
    dependencies: [.package(name: "Herald", path: "../..")],
    targets: [
        .executableTarget(
            name: "projection-bench",
            dependencies: [
                .product(name: "HeraldProjection", package: "Herald"),
                .product(name: "HeraldEvents", package: "Herald"),
            ]
        )
    ],
    swiftLanguageModes: [.v5]
)
