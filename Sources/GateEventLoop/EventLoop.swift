import CCrypto
import CLibevent
import Foundation
import Synchronization

/// A libevent event loop running on one thread.
///
/// Everything that touches Redis connections, HTTP requests or timers of a loop
/// runs on that loop's thread; other threads hand work over with `execute(_:)`.
/// The gate's hot path never leaves its loop.
public final class EventLoop: Sendable {
    /// The libevent base. Only for the wrappers in this package.
    package nonisolated(unsafe) let base: OpaquePointer
    private nonisolated(unsafe) let wakeEvent: OpaquePointer
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let threadID = Mutex<pthread_t?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    private static let threadingReady: Bool = {
        evthread_use_pthreads() == 0
    }()

    /// The priority of an event that must run before the rest of a loop pass once it is
    /// made active (with `event_base_loopcontinue`): the server's memory budget.
    package static let urgentPriority: Int32 = 0

    /// Creates a loop; call `run()` on the thread that should own it, or use
    /// `EventLoop.startThread(name:)`.
    public init() {
        precondition(Self.threadingReady, "libevent could not enable pthreads locking")
        // The epoll changelist folds the add/remove pairs of one loop pass into one
        // epoll_ctl call each (about a quarter fewer system calls per request here).
        let config = event_config_new()
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        let created = event_base_new_with_config(config)
        event_config_free(config)
        guard let base = created else { fatalError("event_base_new failed: out of memory") }
        // Two priorities: every event gets the lower one (1, the default), so they all
        // run in arrival order as with one; the higher (0) is for `urgentPriority`.
        event_base_priority_init(base, 2)
        self.base = base
        let box = WakeBox()
        guard let event = event_new(base, -1, 0, { _, _, context in
            Unmanaged<WakeBox>.fromOpaque(context!).takeUnretainedValue().loop?.runJobs()
        }, Unmanaged.passUnretained(box).toOpaque()) else { fatalError("event_new failed") }
        wakeEvent = event
        wakeBox = box
        box.loop = self
    }

    private let wakeBox: WakeBox

    deinit {
        event_free(wakeEvent)
        event_base_free(base)
    }

    /// Starts a loop on a new thread of its own and returns it once it runs.
    public static func startThread(name: String) -> EventLoop {
        let loop = EventLoop()
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            loop.run(onStart: { started.signal() })
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        started.wait()
        return loop
    }

    /// Runs the loop on the calling thread until `stop()`.
    public func run(onStart: (@Sendable () -> Void)? = nil) {
        threadID.withLock { $0 = pthread_self() }
        if let onStart { execute(onStart) }
        event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        runJobs()
        threadID.withLock { $0 = nil }
        // OpenSSL keeps per-thread state (the DRBG countdown tokens come from) and frees it
        // when the thread exits, unless its process clean-up at exit got there first: a
        // race once `finished` lets the process end. Freed here, before that.
        OPENSSL_thread_stop()
        finished.signal()
    }

    /// Blocks until `run()` has returned (after `stop()`); never call it on the loop.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
    }

    /// Runs `job` on the loop and waits for its result; never call it on the loop.
    public func submitAndWait<T, E: Error>(_ job: @escaping @Sendable () throws(E) -> T) throws(E) -> T {
        precondition(!inLoop, "submitAndWait on the loop's own thread would deadlock")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<T, E>!
        execute {
            do throws(E) { result = .success(try job()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.get()
    }

    /// Stops the loop after the callbacks now running; safe from any thread.
    public func stop() {
        execute { [self] in _ = event_base_loopbreak(self.base) }
    }

    /// Whether the caller runs on this loop's thread.
    public var inLoop: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Runs `job` on the loop's thread soon; safe from any thread, never blocks on the loop.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        let wasEmpty = jobs.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        if wasEmpty { event_active(wakeEvent, 0, 0) }
    }

    private func runJobs() {
        while true {
            let batch = jobs.withLock { queue -> [@Sendable () -> Void] in
                let batch = queue
                queue.removeAll(keepingCapacity: true)
                return batch
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }
}

/// Breaks the reference cycle between the loop and its wake event's context.
private final class WakeBox: @unchecked Sendable {
    weak var loop: EventLoop?
}
