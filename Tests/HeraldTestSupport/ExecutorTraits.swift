import Testing

/// Runs each test of a suite in a task that prefers a ``ThreadExecutor``, not the cooperative
/// pool.
///
/// Swift Testing runs every test, synchronous ones included, on the cooperative pool (one
/// thread per core, two on the CI machine). Two long CPU-bound tests (a damage trial, a
/// reference model run in a debug build) then hold it for minutes, and everything else that
/// runs there waits: the unstructured tasks inside AsyncHTTPClient and swift-service-lifecycle
/// (a request's deadline, a server's cancellation), so servers under test answered late or
/// did not stop. Every suite therefore names its executor: ``serverThreads`` for the server
/// tests, whose bodies, clients and servers must answer promptly, and ``testThreads`` for the
/// rest. The pool is left to short jobs.
public struct ExecutorTrait: SuiteTrait, TestTrait, TestScoping {
    let executor: ThreadExecutor

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == ExecutorTrait {
    /// Each test runs on ``ThreadExecutor/servers``: for tests that talk to servers.
    public static var serverThreads: Self { ExecutorTrait(executor: .servers) }
    /// Each test runs on ``ThreadExecutor/tests``.
    public static var testThreads: Self { ExecutorTrait(executor: .tests) }
}
