// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Herald",
    // The store uses `Synchronization.Mutex` (macOS 15, iOS 18 and their siblings).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "HeraldEvents", targets: ["HeraldEvents"]),
        .library(name: "HeraldProjection", targets: ["HeraldProjection"]),
        .library(name: "HeraldStore", targets: ["HeraldStore"]),
        .library(name: "HeraldIngest", targets: ["HeraldIngest"]),
        .executable(name: "herald", targets: ["herald"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // `swift package generate-documentation` (the DocC catalogues in Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // LMDB itself, linked as a system library (Debian: liblmdb-dev).
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // The only code that touches LMDB pointers.
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        // Canonical events, their validation, JSON form and binary codec. No I/O.
        .target(name: "HeraldEvents"),
        // The pure projection: groups, visibility, counts, update diffs. No I/O, no clock.
        .target(
            name: "HeraldProjection",
            dependencies: ["HeraldEvents"]
        ),
        // CRC-32C with the processor's instruction, which Swift cannot reach (HeraldStore's
        // checksums; it falls back to tables elsewhere).
        .target(name: "CCRC32C"),
        // The log, snapshots, compaction and recovery, over LMDB.
        .target(
            name: "HeraldStore",
            dependencies: [
                "LMDB", "CCRC32C", "HeraldEvents", "HeraldProjection",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // libsodium, linked as a system library (Debian: libsodium-dev): the XSalsa20-Poly1305
        // secretbox of Zulip's encrypted pushes, which swift-crypto does not have.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // Adapters from real push payloads to canonical events.
        .target(
            name: "HeraldIngest",
            dependencies: [
                "HeraldEvents", "CSodium",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The `herald` command-line tool: thin subcommands over the libraries.
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldEvents", "HeraldProjection", "HeraldStore", "HeraldIngest",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What the test targets share (a seeded generator).
        .target(name: "HeraldTestSupport", path: "Tests/HeraldTestSupport"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "CLMDB", "HeraldTestSupport"]),
        .testTarget(name: "HeraldEventsTests", dependencies: ["HeraldEvents", "HeraldTestSupport"]),
        .testTarget(name: "HeraldProjectionTests", dependencies: ["HeraldProjection", "HeraldEvents", "HeraldTestSupport"]),
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: ["HeraldStore", "LMDB", "HeraldEvents", "HeraldProjection", "HeraldTestSupport"]
        ),
        .testTarget(
            name: "HeraldIngestTests", dependencies: ["HeraldIngest", "HeraldEvents", "HeraldProjection", "HeraldTestSupport", "CSodium"]),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: ["herald", "HeraldEvents", "HeraldStore", "HeraldTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
