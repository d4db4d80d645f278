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
        .library(name: "HeraldServer", targets: ["HeraldServer"]),
        .executable(name: "herald", targets: ["herald"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // `swift package generate-documentation` (the DocC catalogues in Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // `herald serve --replicated-log`: the log replicated through PostgreSQL.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
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
        // zlib, linked as a system library (Debian: zlib1g-dev): the gzip files that archive
        // retention exports expired history into.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // The log, snapshots, compaction and recovery, over LMDB.
        .target(
            name: "HeraldStore",
            dependencies: [
                "LMDB", "CCRC32C", "CZlib", "HeraldEvents", "HeraldProjection",
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
        // Adapters from real push payloads to canonical events, and the ingest session that
        // frames, decodes, batches and quarantines payloads into a store.
        .target(
            name: "HeraldIngest",
            dependencies: [
                "HeraldEvents", "HeraldStore", "CSodium",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The log replicated through PostgreSQL (`herald serve --replicated-log`): commits,
        // ownership by epoch, catch-up, followers. Only the server depends on it.
        .target(
            name: "HeraldReplication",
            dependencies: [
                "HeraldStore", "HeraldEvents",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `herald serve`: the store as an HTTP service (Hummingbird), with tokens, metrics and
        // graceful shutdown. Blocking store calls run on a NIOThreadPool, never on an event loop.
        .target(
            name: "HeraldServer",
            dependencies: [
                "LMDB", "HeraldEvents", "HeraldProjection", "HeraldStore", "HeraldIngest", "HeraldReplication",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                // `AccountMove`: the client side of `herald move-account`.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // The `herald` command-line tool: thin subcommands over the libraries.
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldEvents", "HeraldProjection", "HeraldStore", "HeraldIngest", "HeraldServer", "HeraldReplication",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
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
            dependencies: ["HeraldStore", "LMDB", "HeraldEvents", "HeraldProjection", "HeraldTestSupport", "CZlib"]
        ),
        .testTarget(
            name: "HeraldIngestTests",
            dependencies: ["HeraldIngest", "HeraldEvents", "HeraldProjection", "HeraldStore", "HeraldTestSupport", "CSodium"]),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldServer", "HeraldStore", "HeraldEvents", "HeraldIngest", "HeraldTestSupport", "herald",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: ["herald", "HeraldEvents", "HeraldStore", "HeraldTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
