import Foundation

/// A task executor with threads of its own.
///
/// Work that runs in a task preferring one (`withTaskExecutorPreference`,
/// `Task(executorPreference:)`, ``ExecutorTrait``; child tasks inherit the preference,
/// unstructured `Task {}` does not) runs on its threads instead of the cooperative pool:
/// see ``ExecutorTrait`` for which tests do, and why.
///
/// It can grow: when a job arrives and no thread is idle, it starts another, up to a maximum,
/// so that jobs which block (a test body waiting for a child process, a server call that
/// waits for a lock) do not hold up the others. Threads run for the life of the process.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every stored property below `condition` is read and written only with
    // `condition` locked.

    /// The executor of the suites that start servers (``ExecutorTrait/serverThreads``): their
    /// bodies, HTTP clients and in-process servers. Starts with four threads and grows to 64,
    /// so that a body that blocks (on a child process) never holds up a server's answer.
    public static let servers = ThreadExecutor(threads: 4, growingTo: 64, name: "test.server")

    /// The executor of the suites that run `herald` commands and wait for them
    /// (``ExecutorTrait/processThreads``): two threads, so that tests waiting on a child do
    /// not hold the cooperative pool, and with the pool's two no more than four test bodies
    /// compete for the processor (as many as before ordinary tests left this executor's kind;
    /// more starved the PostgreSQL failover tests' child processes).
    public static let processes = ThreadExecutor(threads: 2, name: "test.process")

    private let name: String
    private let maximum: Int
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// Threads waiting for a job, no wake-up reserved for them.
    private var idle = 0
    /// Wake-ups reserved by ``enqueue(_:)`` for idle threads, not yet taken.
    private var wakeups = 0
    private var threads = 0

    /// Starts `threads` threads named `name`; with `maximum` above `threads`, more start
    /// (up to `maximum`) when a job arrives and none is idle.
    public init(threads: Int, growingTo maximum: Int? = nil, name: String) {
        self.name = name
        self.maximum = max(threads, maximum ?? threads)
        condition.lock()
        for _ in 0..<threads { startThread() }
        condition.unlock()
    }

    /// How many threads it has started.
    public var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        if idle > 0 {
            idle -= 1
            wakeups += 1
            condition.signal()
        } else if threads < maximum {
            startThread()
        }
        condition.unlock()
    }

    /// Starts one more thread; `condition` is locked.
    private func startThread() {
        let thread = Thread { [self] in run() }
        thread.name = "\(name).\(threads)"
        thread.stackSize = 8 << 20
        threads += 1
        thread.start()
    }

    private func run() {
        condition.lock()
        while true {
            guard !jobs.isEmpty else {
                idle += 1
                while wakeups == 0 { condition.wait() }
                wakeups -= 1
                continue
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }
}
