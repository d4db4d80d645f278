import ArgumentParser
import Foundation
import HeraldStore

/// `--store DIR`, shared by every subcommand.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("The store directory.", discussion: "Default: $HERALD_STORE, else ./herald.db.", valueName: "DIR"))
    var store: String?

    /// The store path after defaults.
    var path: String {
        if let store { return store }
        if let fromEnvironment = ProcessInfo.processInfo.environment["HERALD_STORE"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return "./herald.db"
    }

    /// Opens the store for writing, creating it when missing.
    func openForWriting(create: Bool = true, configure: (inout Store.Options) -> Void = { _ in }) throws -> Store {
        var options = Store.Options()
        options.create = create
        // A copied store may be damaged: walk its pages before LMDB follows them.
        options.checksPages = true
        // HERALD_SNAPSHOT_INTERVAL overrides the automatic snapshot interval (crash tests use it).
        if let interval = ProcessInfo.processInfo.environment["HERALD_SNAPSHOT_INTERVAL"].flatMap(UInt64.init) {
            options.snapshotInterval = interval
        }
        configure(&options)
        return try Store(path: path, options: options)
    }

    /// Opens an existing store read-only: what every reading command does, so it never
    /// changes the store and works beside a running writer.
    func openForReading(configure: (inout Store.Options) -> Void = { _ in }) throws -> Store {
        var options = Store.Options()
        options.readOnly = true
        configure(&options)
        return try Store(path: path, options: options)
    }
}
