import HeraldEvents
import HeraldIngest
import HeraldStore
import LMDB

/// A failure with its exit code (see `herald --help`).
struct CLIFailure: Error {
    static let usage: Int32 = 1
    static let dataProblem: Int32 = 2
    static let rejected: Int32 = 3

    var exitCode: Int32
    var message: String

    init(exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    /// Classifies a library error: store and data problems exit 2, bad input exits 3.
    init(_ error: any Error) {
        switch error {
        case let failure as CLIFailure:
            self = failure
        case let failure as LineReader.Failure:
            self.init(exitCode: Self.usage, "\(Formatting.escaped(failure.input)): \(failure.operation): \(failure.reason)")
        case let error as StoreError:
            if case .invalidEvent = error {
                self.init(exitCode: Self.rejected, error.description)
            } else if case .invalid = error {
                self.init(exitCode: Self.rejected, error.description)
            } else {
                self.init(exitCode: Self.dataProblem, error.description)
            }
        case let error as LMDBError:
            self.init(exitCode: Self.dataProblem, StoreError.lmdb(error).description)
        case let error as EventError:
            self.init(exitCode: Self.rejected, error.description)
        default:
            self.init(exitCode: Self.dataProblem, "\(error)")
        }
    }
}

extension CLIFailure {
    /// When no record of `store`'s history names `account` (a mistyped or purged name), the
    /// usage error that says so and lists the accounts it has; `nil` when some record does,
    /// so that an empty answer for a known account stays an answer.
    static func unknownAccount(_ account: String, in store: Store) throws -> CLIFailure? {
        let known = try store.accountNames()
        guard !known.contains(where: { $0.isSameName(as: account) }) else { return nil }
        let listed = known.prefix(20).joined(separator: ", ") + (known.count > 20 ? ", … (\(known.count) in all)" : "")
        return CLIFailure(exitCode: usage, "no account '\(account)' in \(store.path) (accounts: \(known.isEmpty ? "none" : listed))")
    }
}
