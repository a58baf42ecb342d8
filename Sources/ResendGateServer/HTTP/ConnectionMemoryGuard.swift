import CHTTPConnection
import CLibevent
import GateEventLoop

/// Keeps what one worker's connections hold within its share of ``ConnectionMemoryBudget``.
/// libevent allocates through counting wrappers: the first allocation past the share wakes
/// this guard once its callback returns, before any other connection is read (and the
/// 200 ms housekeeping checks too). A request's path pays only the count. Loop-confined.
final class ConnectionMemoryGuard {
    let budget: ConnectionMemoryBudget
    private let connections: ConnectionTracker
    private let metrics: WorkerMetrics
    private let log: AccessLog
    private var pressure: OpaquePointer?
    private var closedSinceLog = 0
    private var nextLog = ContinuousClock.now

    /// Call on the worker's loop, before it accepts anything.
    init(loop: EventLoop, budget: ConnectionMemoryBudget, connections: ConnectionTracker, metrics: WorkerMetrics, log: AccessLog) {
        self.budget = budget
        self.connections = connections
        self.metrics = metrics
        self.log = log
        pressure = event_new(loop.base, -1, 0, { _, _, context in
            Unmanaged<ConnectionMemoryGuard>.fromOpaque(context!).takeUnretainedValue().relieve()
        }, Unmanaged.passUnretained(self).toOpaque())
        event_priority_set(pressure, EventLoop.urgentPriority)
        rg_memory_watch(pressure, Int64(budget.perWorker))
    }

    /// What this worker's connections hold now, in bytes.
    var held: Int { Int(rg_memory_thread_bytes()) }

    /// From the worker's housekeeping timer.
    func check() {
        metrics.set(.connectionMemoryBytes, Int64(held))
        relieve()
    }

    /// Stops watching; call on the loop before the loop or the connections are freed.
    func detach() {
        guard let pressure else { return }
        rg_memory_watch(nil, 0)
        event_free(pressure)
        self.pressure = nil
    }

    private func relieve() {
        let before = held
        guard before > budget.perWorker else { return rg_memory_rearm() }
        let closed = connections.shed(bytes: before - budget.lowWater)
        // Nothing to close (all held is being served): the next allocation must not scan
        // again; the 200 ms check retries, and re-arms once under the budget.
        if closed > 0 { rg_memory_rearm() }
        metrics.add(.shedConnections, Int64(closed))
        closedSinceLog += closed
        let now = ContinuousClock.now
        guard closedSinceLog > 0, now >= nextLog else { return }
        nextLog = now + AccessLog.reportInterval
        log.message(.warning, "connections held \(before >> 10) KiB, over this worker's \(budget.perWorker >> 10) KiB budget: "
            + "\(closedSinceLog) closed since the last report (stuck with unsent bytes, most first, then the oldest idle); "
            + "reported at most every \(AccessLog.reportInterval)")
        closedSinceLog = 0
    }
}
