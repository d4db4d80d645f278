import Foundation
import Synchronization

/// A task executor with threads of its own.
///
/// Swift Testing runs every test, synchronous ones included, on the cooperative pool, which
/// has one thread per core: two on the CI machine. A test that blocks (a rebuild, a child
/// process, a store's fsync) holds one of them for as long as it runs, so two such tests
/// stop every task in the process. Work that runs in a task preferring this executor
/// (`withTaskExecutorPreference`, `Task(executorPreference:)`; child tasks inherit it,
/// unstructured `Task {}` does not) runs here instead, and goes on while the pool is held.
public final class ThreadExecutor: TaskExecutor, Sendable {
    /// One executor for the server tests: their bodies, HTTP clients and in-process servers.
    /// Eight threads, so that a few test bodies blocked at once (a child process starting, a
    /// CLI run) do not hold up the servers of the others.
    public static let servers = ThreadExecutor(threads: 8, name: "test.server")

    private let jobs = Mutex<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)

    /// Starts `threads` threads named `name`, which run for the life of the process.
    public init(threads: Int, name: String) {
        for index in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = "\(name).\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
