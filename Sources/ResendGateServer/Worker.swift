import CHTTPConnection
import CLibevent
import GateEventLoop
import RedisClient
import ResendGate

/// One event loop of the server: its own listener on the shared port, its own
/// evhttp, its own Redis connection and parser cache. A request is read, decided
/// and answered on this loop alone: no thread hop, no lock, no blocking call.
final class Worker {
    let index: Int
    let loop: EventLoop
    let configuration: ServerConfiguration
    let gate: GateWorker
    let metrics = WorkerMetrics()
    let log: AccessLog
    /// Set by the server once every worker exists, before serving starts.
    var shared: SharedState!
    private(set) var http: OpaquePointer!
    private var boundSocket: OpaquePointer?
    private(set) var connections: ConnectionTracker?
    private var acceptPause: AcceptPause?
    /// Keeps what this worker's connections hold within its share of the memory budget.
    private var memoryGuard: ConnectionMemoryGuard?
    /// Closes connections whose request is not received whole in --connection-timeout.
    private var requestDeadlines: RequestDeadlines?
    private(set) var port = 0
    /// Reused for every request: the body bytes and the JSON being written.
    var bodyBuffer: [UInt8] = []
    var json = JSONWriter()
    private var nextRequestID: UInt64
    /// `configuration.connectionTimeout`, as libevent takes it.
    private let connectionTimeout: timeval
    private(set) var inFlight = 0
    /// Whether `Host` must be a loopback name (no API keys, loopback listener).
    let checksHost: Bool
    /// The origins whose pages may send mutating requests, lower-case; set once the
    /// listener's port is known, before it accepts anything.
    private(set) var allowedOrigins: [[UInt8]] = []
    /// Server-sent event streams of countdowns, with the worker's one countdown ticker
    /// (made by `start`, once connections are tracked).
    private(set) var countdownStreams: CountdownStreams!
    private lazy var flushTimer = EventTimer(loop: loop) { [unowned self] in self.flushLog() }
    private lazy var drainTimer = EventTimer(loop: loop) { [unowned self] in self.finishDraining() }
    private var drainDeadline = ContinuousClock.now
    private var memoryTrim = MemoryTrim()

    init(index: Int, loop: EventLoop, configuration: ServerConfiguration, gate: GateConfiguration) {
        self.index = index
        self.loop = loop
        self.configuration = configuration
        log = AccessLog(level: configuration.logLevel)
        self.gate = GateWorker(loop: loop, configuration: gate, logger: log.gateLogger(worker: index))
        nextRequestID = UInt64(index) << 48 | UInt64.random(in: 0..<(1 << 32))
        connectionTimeout = timeval(configuration.connectionTimeout)
        checksHost = configuration.checksHost
        bodyBuffer.reserveCapacity(configuration.maxBodyBytes)
    }

    /// Opens this worker's listener and starts serving. Runs on the loop.
    func start(port: Int) throws(ConfigurationError) {
        rg_memory_count_libevent()  // before evhttp allocates: the memory budget counts it all
        guard let http = evhttp_new(loop.base) else { throw ConfigurationError(field: "port", message: "evhttp_new failed") }
        self.http = http
        // Above the limits we answer 413 and 431 ourselves, in JSON; far above
        // them, libevent stops reading and answers 413 itself. What a connection may
        // hold of a body before anything is checked is that hard limit (see HardLimits).
        evhttp_set_max_body_size(http, HardLimits.bodyBytes(configuration.maxBodyBytes))
        evhttp_set_max_headers_size(http, configuration.maxHeaderBytes * 4)
        var timeout = connectionTimeout
        evhttp_set_timeout_tv(http, &timeout)
        // Every method reaches the router, so that a wrong one gets our 405. That
        // includes methods libevent does not know (`FOO`): libevent marks them with its
        // internal EVHTTP_REQ_UNKNOWN_ (1 << 15), and without that bit it answers them
        // 501 itself, a 5xx for a client's mistake.
        evhttp_set_allowed_methods(http, UInt16(truncatingIfNeeded: EVHTTP_REQ_GET.rawValue | EVHTTP_REQ_POST.rawValue
            | EVHTTP_REQ_HEAD.rawValue | EVHTTP_REQ_PUT.rawValue | EVHTTP_REQ_DELETE.rawValue | EVHTTP_REQ_OPTIONS.rawValue
            | EVHTTP_REQ_TRACE.rawValue | EVHTTP_REQ_CONNECT.rawValue | EVHTTP_REQ_PATCH.rawValue | 1 << 15))
        evhttp_set_default_content_type(http, "application/json; charset=utf-8")
        connections = ConnectionTracker(loop: loop, http: http, limit: configuration.maxConnectionsPerWorker, metrics: metrics)
        memoryGuard = ConnectionMemoryGuard(
            loop: loop, budget: ConnectionMemoryBudget(workers: configuration.workers, total: configuration.connectionMemoryBytes), connections: connections!,
            metrics: metrics, log: log)
        countdownStreams = CountdownStreams(
            loop: loop, gate: gate, metrics: metrics, connections: connections, connectionTimeout: connectionTimeout,
            limits: StreamLimits(maxConnections: configuration.maxConnectionsPerWorker),
            heartbeatInterval: configuration.streamHeartbeatInterval)
        connections?.evictStream = { [unowned self] in self.countdownStreams.evictOldest() }
        if let connections {
            requestDeadlines = RequestDeadlines(
                loop: loop, connections: connections, timeout: configuration.connectionTimeout, metrics: metrics)
        }
        evhttp_set_gencb(http, { raw, context in
            guard let raw, let context else { return }
            Unmanaged<Worker>.fromOpaque(context).takeUnretainedValue().handle(HTTPRequest(raw: raw))
        }, Unmanaged.passUnretained(self).toOpaque())
        let opened = try Listener.open(on: loop.base, host: configuration.host, port: port)
        self.port = opened.port
        allowedOrigins = configuration.allowedOrigins(port: opened.port).map { Array($0.utf8) }
        boundSocket = evhttp_bind_listener(http, opened.listener)
        if let connections {
            acceptPause = AcceptPause(
                loop: loop, listener: opened.listener, connections: connections, metrics: metrics, log: log)
        }
        flushTimer.schedule(after: .milliseconds(200))
    }

    /// Stops accepting; requests in flight still complete. Runs on the loop.
    func stopAccepting() {
        guard let http, let boundSocket else { return }
        acceptPause?.detach()
        acceptPause = nil
        evhttp_del_accept_socket(http, boundSocket)  // also closes the listening socket
        self.boundSocket = nil
    }

    /// Stops accepting, ends every event stream with its `shutdown` event, lets
    /// requests in flight finish until `deadline`, then closes everything and stops
    /// the loop. Runs on the loop.
    func drain(until deadline: ContinuousClock.Instant) {
        stopAccepting()
        countdownStreams?.shutDown()
        drainDeadline = deadline
        finishDraining()
    }

    private func finishDraining() {
        // A response handed to evhttp is written on a later loop pass: freeing evhttp
        // before then would close its connection with nothing sent.
        let unwritten = connections?.hasUnwrittenResponses ?? false
        guard (inFlight == 0 && !unwritten) || ContinuousClock.now >= drainDeadline else {
            drainTimer.schedule(after: .milliseconds(10))
            return
        }
        if inFlight > 0 { log.message(.warning, "drain timeout: closing \(inFlight) requests in flight") }
        close()
        loop.stop()
    }

    /// Closes the Redis connection, then every client connection. Runs on the loop.
    func close() {
        flushTimer.cancel()
        drainTimer.cancel()
        // First: closing the gate fails the calls still waiting on Redis at once, and
        // their requests are answered (503) while evhttp still holds them.
        gate.close()
        log.flush()
        acceptPause?.detach()  // evhttp_free frees the listener
        acceptPause = nil
        memoryGuard?.detach()
        memoryGuard = nil
        if let http { evhttp_free(http) }
        http = nil
        requestDeadlines = nil
        connections = nil
    }

    /// Housekeeping every 200 ms: the log, the memory budget, and memory given back
    /// after a crowd left.
    private func flushLog() {
        log.flush()
        memoryGuard?.check()
        memoryTrim.check(openConnections: metrics.value(.openConnections), held: memoryGuard?.held ?? 0)
        flushTimer.schedule(after: .milliseconds(200))
    }

    // MARK: - Requests

    private func handle(_ request: HTTPRequest) {
        let started = ContinuousClock.now
        nextRequestID &+= 1
        connections?.requestStarted(request.raw)
        requestDeadlines?.requestReceived(request.raw)
        rg_http_keep_reading(request.raw)
        let exchange = Exchange(request: request, started: started, id: nextRequestID)
        inFlight += 1
        metrics.add(.inFlight)
        route(exchange)
    }

    /// Sends a JSON body written by `write`, and records the request.
    func respond(_ exchange: Exchange, status: Int, headers: [(String, String)] = [], write: (inout JSONWriter) -> Void) {
        json.reset()
        write(&json)
        respond(exchange, status: status, headers: headers, body: json.bytes)
    }

    func respond(_ exchange: Exchange, status: Int, headers: [(String, String)] = [], body: [UInt8],
                 contentType: String = "application/json; charset=utf-8") {
        let responder = HTTPResponder(request: exchange.request, connectionTimeout: connectionTimeout)
        for (name, value) in headers { responder.header(name, value) }
        // libevent reads chunk sizes leniently (`0x1b`, `+1b`, ` 1b` all pass), where a
        // proxy in front may read them otherwise and so end the body elsewhere: after
        // a chunked request nothing more is read from its connection, so no bytes that
        // the two disagree on can become a request of their own.
        if exchange.request.hasHeader("Transfer-Encoding") && !headers.contains(where: { $0.0 == "Connection" }) {
            responder.header("Connection", "close")
        }
        // The id ties a response to its log line, so it is sent when that line is written.
        if log.enabled(.info) { responder.header("X-Request-Id", String(exchange.id, radix: 16)) }
        // Recorded before the answer leaves: a client that has it and then asks /metrics
        // (perhaps on another worker) must find it counted.
        finish(exchange, status: status)
        let writtenAtOnce = status == 204
            ? responder.sendEmpty(status: status)
            : responder.send(status: status, body: exchange.method == .head ? [] : body, contentType: contentType)
        if !writtenAtOnce { metrics.add(.answersQueued) }
    }

    func respond(_ exchange: Exchange, error: APIError, headers: [(String, String)] = []) {
        respond(exchange, status: error.status, headers: headers) { error.writeJSON(to: &$0) }
    }

    /// Records an answered request; a streamed one (SSE) is recorded once its head is sent.
    func finish(_ exchange: Exchange, status: Int) {
        let elapsed = ContinuousClock.now - exchange.started
        inFlight -= 1
        metrics.add(.inFlight, -1)
        metrics.observe(latency: elapsed, status: status)
        log.request(method: exchange.methodName, path: exchange.path, status: status, duration: elapsed, id: exchange.id)
    }
}

/// One request on its way through a worker.
struct Exchange {
    let request: HTTPRequest
    let started: ContinuousClock.Instant
    let id: UInt64
    let method: HTTPRequest.Method
    let path: Substring
    let query: Substring?

    init(request: HTTPRequest, started: ContinuousClock.Instant, id: UInt64) {
        self.request = request
        self.started = started
        self.id = id
        method = request.method
        (path, query) = request.target
    }

    var methodName: String { method.rawValue }
}

extension timeval {
    init(_ duration: Duration) {
        let microseconds = Int(duration / .microseconds(1))
        self.init(tv_sec: microseconds / 1_000_000, tv_usec: microseconds % 1_000_000)
    }
}
