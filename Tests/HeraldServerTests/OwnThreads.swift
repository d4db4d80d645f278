import HeraldTestSupport
import Testing

/// Runs each test of a suite on ``ThreadExecutor/servers`` instead of the cooperative pool.
///
/// The server tests talk to a server over HTTP with deadlines. Swift Testing runs every test,
/// blocking ones included, on the cooperative pool (one thread per core), so on a busy
/// machine two tests elsewhere in the run that block (a rebuild, a child process, a damage
/// trial) can hold a test's client past its deadline even though the server answered. With
/// this trait the test body, its client and the servers it starts run on threads of their
/// own (child tasks inherit the preference), whatever the rest of the run does.
struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadExecutor.servers) { try await function() }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Each test runs on ``ThreadExecutor/servers``, not the cooperative pool.
    static var ownThreads: Self { OwnThreadsTrait() }
}
