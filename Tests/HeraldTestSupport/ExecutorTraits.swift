import Testing

/// Runs each test of a suite in a task that prefers a ``ThreadExecutor``, not the cooperative
/// pool: for the suites that start servers or child processes, and only those.
///
/// Swift Testing runs every test, synchronous ones included, on the cooperative pool (one
/// thread per core, two on the CI machine), and starts them all at once. Ordinary tests run
/// there and need no trait: each holds a thread for seconds at most (the CPU-bound ones are
/// sized for a debug build, their long runs behind environment variables such as
/// `HERALD_FUZZ_CASES` and `HERALD_AUDIT_TARGETS`, and the suites of several such cases are
/// `.serialized`), and servers under test answer and stop without a pool thread
/// (`CooperativePoolTests`).
///
/// The suites that start servers or child processes are the exception. Their bodies block for
/// as long as a child runs (`waitUntilExit`, reading its pipes: `herald` commands, `herald
/// serve`, HAProxy, PostgreSQL, a browser), which on two pool threads would hold up every
/// other test, and they drive servers through many requests and timed waits, which must not
/// queue behind the other tests' work. ``serverThreads`` grows, so that a body that blocks
/// never holds up a server's answer; ``processThreads``, for suites that only run `herald`
/// commands, has two threads, so that at most two such children run at once.
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
    /// Each test runs on ``ThreadExecutor/servers``: for suites that start servers (in
    /// process, or as child processes beside PostgreSQL, HAProxy or a browser).
    public static var serverThreads: Self { ExecutorTrait(executor: .servers) }
    /// Each test runs on ``ThreadExecutor/processes``: for suites that run `herald` commands
    /// as child processes and wait for them.
    public static var processThreads: Self { ExecutorTrait(executor: .processes) }
}
