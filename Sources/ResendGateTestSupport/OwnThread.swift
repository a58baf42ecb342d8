import Foundation

// The cooperative pool that runs every async test, and every synchronous `@Test` function
// too (Swift Testing calls them from a task), has one thread per core: two on the CI
// machine. A test that blocks one of them (starting a server, waiting for a process,
// polling with usleep) stalls every other test in the process, and the timed suites'
// 1-2 s windows with them. These run blocking work on threads of their own.

/// Runs blocking work (starting Redis or a gate, waiting for a process) on a thread of
/// its own and returns its result, holding no cooperative thread meanwhile. `work` runs
/// outside the test's task: it must not record issues; check what it returns instead.
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// Runs blocking work that cannot fail (stopping a server) on a thread of its own.
public func offThePool(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            work()
            continuation.resume()
        }
    }
}

/// Runs `body` in the calling task with a thread of its own as its executor: a
/// synchronous test made `async` this way may block (start servers, wait for log lines)
/// without holding a cooperative thread, and its `#expect`s still belong to its test.
/// `body` must not be isolated to an actor (on the main actor it would run there).
public func onOwnThread<T, Failure: Error>(
    named name: String = "test-own-thread", _ body: () async throws(Failure) -> T
) async throws(Failure) -> T {
    let executor = DedicatedThreadExecutor(name: name)
    defer { executor.shutdown() }
    return try await withTaskExecutorPreference(executor, operation: body)
}

/// A task executor with one thread of its own: what runs on it never waits for, nor
/// holds, a cooperative thread (also how a latency measurement counts only the code
/// measured). The thread ends after `shutdown()` once its queue is empty.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `stopping` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    public init(name: String = "dedicated-executor") {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run()
        }
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish once its queue is empty.
    public func shutdown() {
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
                return condition.unlock()
            }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// Names the calling thread as `ps -L`, `top -H` and debuggers show it, through Linux's
/// /proc/thread-self/comm: Foundation on Linux drops a name set before `start()` (it races
/// the thread's start) and does not export pthread_setname_np. The kernel keeps 15 bytes.
private func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var bytes = Array(name.utf8.prefix(15))
    while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
