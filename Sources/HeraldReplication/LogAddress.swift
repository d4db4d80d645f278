import Foundation
import PostgresNIO

/// A `--replicated-log` URL, `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, checked.
/// Its ``description`` never holds the password.
public struct LogAddress: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    var password: String?
    public var database: String

    /// Parses `url`; throws ``ReplicationError/Code/badURL`` saying what is wrong (never
    /// repeating the password).
    public init(_ url: String) throws(ReplicationError) {
        guard let components = URLComponents(string: url) else {
            throw ReplicationError(.badURL, "--replicated-log: not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        guard let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme.lowercased()) else {
            throw ReplicationError(
                .badURL, "--replicated-log: the scheme must be postgres:// or postgresql://, got \(components.scheme.map { "\($0)://" } ?? "none")")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ReplicationError(.badURL, "--replicated-log: no host; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        guard let user = components.user, !user.isEmpty else {
            throw ReplicationError(.badURL, "--replicated-log: no user; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw ReplicationError(.badURL, "--replicated-log: the path must name one database, as in postgres://USER@HOST:PORT/DATABASE")
        }
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode", item.value == "disable" else {
                throw ReplicationError(.badURL, "--replicated-log: unsupported parameter \(item.name); only sslmode=disable is (no TLS)")
            }
        }
        self.host = host
        port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
    }

    /// `postgres://USER@HOST:PORT/DATABASE`: the URL without its password.
    public var description: String { "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }

    var configuration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}
