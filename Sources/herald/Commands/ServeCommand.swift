import ArgumentParser
import Foundation
import HeraldServer
import Logging
import Synchronization

/// `herald serve`: the store as an HTTP service (HeraldServer).
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP: ingest, state, update streams, Matrix push gateway, metrics.",
        discussion: """
            The admin token comes from $HERALD_ADMIN_TOKEN; without it, the first start generates
            one and prints it once (only its SHA-256 is stored). SIGTERM or SIGINT stops
            accepting, lets requests finish, takes a final snapshot and exits.
            /healthz, /readyz and /metrics need no token: keep them on an internal address.

            Example:
              HERALD_ADMIN_TOKEN=secret herald serve --store ./herald.db --listen 127.0.0.1:8080
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The address to listen on.", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8080"

    @Option(name: .long, help: "The largest request body accepted, in bytes.")
    var maxBodyBytes = 4 << 20

    @Option(name: .long, help: "Seconds between automatic snapshots while events arrive (0: none).")
    var snapshotSeconds = 300

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard Self.address(listen) != nil else { throw ValidationError("--listen must be HOST:PORT, e.g. 127.0.0.1:8080") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    /// `herald`'s root command is synchronous: the server runs in a task while the main
    /// thread (not one of the cooperative pool's) waits for it.
    func run() throws {
        let outcome = Mutex<Result<Void, any Error>>(.success(()))
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await serve() } catch { outcome.withLock { $0 = .failure(error) } }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }.get()
    }

    private func serve() async throws {
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
            return handler
        }
        var configuration = ServerConfiguration(storePath: store.path)
        (configuration.host, configuration.port) = Self.address(listen)!
        configuration.adminToken = ProcessInfo.processInfo.environment["HERALD_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.maxBodyBytes = maxBodyBytes
        configuration.snapshotSeconds = snapshotSeconds
        configuration.logger = Logger(label: "herald.serve")
        let server = try HeraldServer(configuration: configuration)
        if let token = server.generatedAdminToken {
            // Shown once: only its hash is stored.
            FileHandle.standardOutput.write(Data("admin token (shown once, store it now): \(token)\n".utf8))
        }
        let (host, path) = (configuration.host, configuration.storePath)
        try await server.run { port in
            FileHandle.standardOutput.write(Data("herald serve: listening on \(host):\(port), store \(path)\n".utf8))
        }
    }
}
