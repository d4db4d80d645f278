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

    /// Where reading commands remember clean page walks (`Store.Options.walkVerdicts`):
    /// `$HERALD_CACHE_DIR`, else `$XDG_CACHE_HOME/herald`, else `$HOME/.cache/herald`; `nil`
    /// (every open walks) when none is set or `HERALD_CACHE_DIR` is empty.
    static var walkVerdictDirectory: String? {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["HERALD_CACHE_DIR"] { return explicit.isEmpty ? nil : explicit }
        if let cache = environment["XDG_CACHE_HOME"], !cache.isEmpty {
            _ = try? FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            return cache + "/herald"
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        _ = try? FileManager.default.createDirectory(atPath: home + "/.cache", withIntermediateDirectories: true)
        return home + "/.cache/herald"
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
        // The page walk of a read-only open is remembered for the unchanged file, so that a
        // second audit of the same copy skips it (verify turns this off: it checks the file).
        options.walkVerdicts = Self.walkVerdictDirectory
        configure(&options)
        return try Store(path: path, options: options)
    }
}
