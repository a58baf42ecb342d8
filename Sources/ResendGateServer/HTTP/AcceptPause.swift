import CHTTPConnection
import CLibevent
import GateEventLoop
#if canImport(Glibc)
import Glibc
#endif

/// When `accept()` fails for want of descriptors (EMFILE, ENFILE) or memory, the
/// connection stays in the backlog and libevent would retry on every loop pass: a busy
/// loop that floods stderr and starves every client. Instead the listener pauses, the
/// oldest idle connections close so the next accepts (a `/healthz`) succeed, and the
/// failures are logged once an interval. Loop-confined.
final class AcceptPause {
    /// How long the listener rests after a failed accept.
    static let pause: Duration = .milliseconds(50)
    /// Idle connections closed per failed accept, to free descriptors for the next ones.
    static let evictionBatch = 32
    /// Streams closed per failed accept when no connection is idle.
    static let streamEvictionBatch = 4

    private var listener: OpaquePointer?
    private let connections: ConnectionTracker
    private let metrics: WorkerMetrics
    private let log: AccessLog
    private var resume: EventTimer!
    private var failures = 0
    private var evicted = 0
    private var streamsClosed = 0
    private var nextLog = ContinuousClock.now

    init(loop: EventLoop, listener: OpaquePointer, connections: ConnectionTracker, metrics: WorkerMetrics, log: AccessLog) {
        self.listener = listener
        self.connections = connections
        self.metrics = metrics
        self.log = log
        resume = EventTimer(loop: loop) { [unowned self] in
            if let listener = self.listener { evconnlistener_enable(listener) }
        }
        rg_listener_on_accept_failure(listener, { error, context in
            Unmanaged<AcceptPause>.fromOpaque(context!).takeUnretainedValue().acceptFailed(error)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The listener is about to be freed: never touch it again.
    func detach() {
        guard let listener else { return }
        rg_listener_on_accept_failure(listener, nil, nil)
        resume.cancel()
        self.listener = nil
    }

    private func acceptFailed(_ error: Int32) {
        guard let listener else { return }
        evconnlistener_disable(listener)
        resume.schedule(after: Self.pause)
        failures += 1
        metrics.add(.acceptPauses)
        let outOfDescriptors = error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM
        if outOfDescriptors {
            let closed = connections.evictIdle(upTo: Self.evictionBatch)
            evicted += closed
            // Nothing idle (event streams hold every descriptor): close the oldest streams.
            if closed == 0 { streamsClosed += connections.evictStreams(upTo: Self.streamEvictionBatch) }
        }
        let now = ContinuousClock.now
        guard now >= nextLog else { return }
        nextLog = now + AccessLog.reportInterval
        let what = String(cString: strerror(error))
        let relief = outOfDescriptors ? "; \(evicted) idle connections and \(streamsClosed) event streams closed to make room" : ""
        log.message(.warning, "accept() failed: \(what) (\(failures)x since the last report); the listener pauses \(Self.pause) after each failure"
            + "\(relief); reported at most every \(AccessLog.reportInterval)")
        failures = 0
        evicted = 0
        streamsClosed = 0
    }
}
