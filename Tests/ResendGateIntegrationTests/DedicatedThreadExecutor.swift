import Foundation

/// A task executor with one thread of its own, so that a latency measurement counts the
/// gate's time and not the wait for a free cooperative thread: the pool has one thread per
/// core (two here), and other suites block it while their redis-servers boot.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init(name: String = "latency-probe") {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish once its queue is empty.
    func shutdown() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// Runs `body` on a thread of its own and returns its result with how long it took.
func timedOnOwnThread<T: Sendable>(_ body: @Sendable () async -> T) async -> (T, Duration) {
    let executor = DedicatedThreadExecutor()
    defer { executor.shutdown() }
    return await withTaskExecutorPreference(executor) {
        let start = ContinuousClock.now
        let result = await body()
        return (result, ContinuousClock.now - start)
    }
}
