import CHTTPConnection

/// A worker's client connections on `CHTTPConnection`'s framing, which keeps the cap
/// (`--max-connections`: past it the oldest idle connection closes, else the oldest event
/// stream) and each request's deadline (`--connection-timeout` from its first byte,
/// however busy a trickle), and tells the worker its requests, refusals and counts.
/// Loop-confined.
final class ConnectionTracker {
    private let server: OpaquePointer
    private unowned let worker: Worker

    init?(worker: Worker, listener: OpaquePointer) {
        self.worker = worker
        let configuration = worker.configuration
        let limits = rg_http_limits(
            max_head_bytes: configuration.maxHeaderBytes, max_body_bytes: configuration.maxBodyBytes,
            timeout_nanoseconds: UInt64(max(0, configuration.connectionTimeout / .nanoseconds(1))),
            max_connections: configuration.maxConnectionsPerWorker)
        var callbacks = rg_http_callbacks()
        callbacks.request = { connection, request, context in
            ConnectionTracker.worker(context).handle(HTTPRequest(connection: connection!, parsed: request!))
        }
        callbacks.refused = { connection, request, status, message, context in
            ConnectionTracker.worker(context).refused(
                HTTPRequest(connection: connection!, parsed: request!), status: Int(status), message: String(cString: message!))
        }
        callbacks.closed = { _, owner, _ in
            Unmanaged<EventStream>.fromOpaque(owner!).takeUnretainedValue().connectionClosed()
        }
        callbacks.evict_stream = { context in
            ConnectionTracker.worker(context).countdownStreams.evictOldest() ? 1 : 0
        }
        callbacks.note = { event, context in
            let metrics = ConnectionTracker.worker(context).metrics
            switch event {
            case RG_HTTP_OPENED: metrics.add(.openConnections)
            case RG_HTTP_CLOSED: metrics.add(.openConnections, -1)
            case RG_HTTP_EVICTED: metrics.add(.evictedConnections)
            case RG_HTTP_LATE_REQUEST: metrics.add(.lateRequests)
            default: break
            }
        }
        guard let server = rg_http_server_new(
            worker.loop.base, listener, limits, callbacks, Unmanaged.passUnretained(worker).toOpaque()) else { return nil }
        self.server = server
    }

    private static func worker(_ context: UnsafeMutableRawPointer?) -> Worker {
        Unmanaged<Worker>.fromOpaque(context!).takeUnretainedValue()
    }

    /// Whether a request is being served, an answer written or a stream open.
    var isBusy: Bool { rg_http_server_busy(server) != 0 }

    /// Stops accepting (the listener is freed); open connections go on.
    func stopAccepting() {
        rg_http_server_stop_accepting(server)
    }

    /// Closes every connection; the tracker is not used again.
    func close() {
        rg_http_server_free(server)
    }

    /// Closes up to `count` of the oldest connections not being served; returns how many.
    func evictIdle(upTo count: Int) -> Int {
        rg_http_server_evict_idle(server, count)
    }

    /// Closes up to `count` of the oldest event streams; returns how many.
    func evictStreams(upTo count: Int) -> Int {
        var closed = 0
        while closed < count, worker.countdownStreams.evictOldest() { closed += 1 }
        return closed
    }

    /// Over the memory budget: closes connections until about `bytes` are freed, those
    /// stuck with unsent bytes (a stream `CountdownStreams.maxUnsentBytes` behind), most
    /// first; then, oldest first, those still sending a request, then idle ones whose next
    /// request is not waiting. Never a request being served, a stream whose client reads,
    /// or a connection sent nothing yet (issue 23: a fresh `/healthz` under a crowd that
    /// never read). Returns how many.
    func shed(bytes: Int) -> Int {
        rg_http_server_shed(server, bytes, CountdownStreams.maxUnsentBytes)
    }
}
