import HeraldConsole
import HeraldStore
import Hummingbird

/// The web console's view of a running server: its store, update streams and the last
/// hour of its activity.
struct ServedConsole: ConsoleStore {
    let server: HeraldServer

    var path: String { server.host.path }

    func run<Result: Sendable>(_ body: @escaping @Sendable (Store) throws -> Result) async throws -> Result {
        try await server.host.run(body)
    }

    func updateStream(_ request: Request, account: String) async throws -> Response? {
        try await server.updateStream(request, account: account)
    }

    func activity() async throws -> ConsoleActivity.Series { server.metrics.activity.series() }
}
