import CHTTPConnection
import CLibevent
import GateEventLoop
import RedisClient
import ResendGate

/// An absolute deadline for receiving each request, headers and body: `--connection-timeout`
/// from the request's first byte. libevent's one connection timeout restarts with every
/// byte read, so a client trickling a body (a byte every few seconds) would hold its
/// connection, and up to the body limit of memory, for as long as it liked; past this
/// deadline the connection is closed instead, however busy the trickle.
///
/// Each connection notes (in C, as bytes arrive: no allocation) when the first byte of
/// the request it is receiving came; a sweep a few times per timeout closes those whose
/// request is still incomplete past the deadline. Connections whose request is being
/// served or streamed are skipped: the deadline covers receiving only. Loop-confined.
final class RequestDeadlines {
    private let timeoutNanoseconds: UInt64
    private let sweepInterval: Duration
    private var clocks: [OpaquePointer: OpaquePointer] = [:]  // connection -> rg_arrival_clock
    private var sweep: EventTimer!
    private unowned let connections: ConnectionTracker
    private let metrics: WorkerMetrics

    init(loop: EventLoop, connections: ConnectionTracker, timeout: Duration, metrics: WorkerMetrics) {
        self.connections = connections
        self.metrics = metrics
        timeoutNanoseconds = UInt64(max(0, timeout / .nanoseconds(1)))
        // A quarter of the timeout (between 50 ms and 1 s): a connection is closed at most
        // that much past its deadline.
        sweepInterval = min(.seconds(1), max(.milliseconds(50), timeout / 4))
        sweep = EventTimer(loop: loop) { [unowned self] in self.closeLateRequests() }
        connections.lifecycleObserver = self
        sweep.schedule(after: sweepInterval)
    }

    deinit {
        sweep.cancel()
    }

    /// A new connection (before any I/O on it): note its arrivals from now on.
    func opened(_ connection: OpaquePointer) {
        guard let bufferevent = evhttp_connection_get_bufferevent(connection),
              let clock = rg_http_watch_arrivals(bufferevent) else { return }
        clocks[connection] = clock
    }

    func closed(_ connection: OpaquePointer) {
        guard let clock = clocks.removeValue(forKey: connection) else { return }
        rg_http_stop_watching_arrivals(evhttp_connection_get_bufferevent(connection), clock)
    }

    /// Whether `connection` is receiving a request: bytes of it arrived and it was not
    /// taken whole yet (false for a connection that has not been read from since its last
    /// request).
    func isReceiving(_ connection: OpaquePointer) -> Bool {
        clocks[connection].map { rg_http_first_arrival($0) != 0 } ?? false
    }

    /// `request` was received whole: the deadline now waits for the next one's first byte.
    func requestReceived(_ request: UnsafeMutablePointer<evhttp_request>) {
        guard let connection = evhttp_request_get_connection(request), let clock = clocks[connection],
              let bufferevent = evhttp_connection_get_bufferevent(connection) else { return }
        rg_http_rearm_arrivals(clock, bufferevent)
    }

    private func closeLateRequests() {
        defer { sweep.schedule(after: sweepInterval) }
        let now = rg_coarse_now_nanoseconds()
        var late: [OpaquePointer] = []
        for (connection, clock) in clocks {
            let began = rg_http_first_arrival(clock)
            guard began != 0, now > began, now - began > timeoutNanoseconds else { continue }
            if !connections.isServing(connection) { late.append(connection) }
        }
        // Freeing runs the close callback, which forgets the connection here: not while iterating.
        for connection in late where clocks[connection] != nil {
            metrics.add(.lateRequests)
            evhttp_connection_free(connection)
        }
    }
}

/// Where libevent stops reading a request and answers it itself.
enum HardLimits {
    /// The largest body evhttp reads: the limit and half again, so that a body just past
    /// the limit (up to 1.5×) still gets our JSON 413 `body_too_large`, while a client
    /// that never finishes its body makes the connection hold no more than this.
    static func bodyBytes(_ maxBodyBytes: Int) -> Int {
        maxBodyBytes + maxBodyBytes / 2
    }
}
