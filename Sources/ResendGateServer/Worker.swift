import GateEventLoop
import ResendGate

/// One event loop of the server, with its own listener on the shared port, connections,
/// Redis connection and parser cache: a request is read, decided and answered on this loop
/// alone, with no thread hop, no lock, no blocking call.
final class Worker {
    let loop: EventLoop
    let configuration: ServerConfiguration
    let gate: GateWorker
    let metrics = WorkerMetrics()
    let log: AccessLog
    /// Set by the server once every worker exists, before serving starts.
    var shared: SharedState!
    private(set) var connections: ConnectionTracker?
    private var acceptPause: AcceptPause?
    private var memoryGuard: ConnectionMemoryGuard?
    /// Reused for every request: the body bytes, the JSON being written, the answer's headers.
    var bodyBuffer: [UInt8] = []
    var json = JSONWriter()
    fileprivate var responseHeaders = ResponseHeaders()
    private var nextRequestID: UInt64
    let checksHost: Bool
    /// The origins whose pages may send mutating requests, lower-case; set by `start`.
    private(set) var allowedOrigins: [[UInt8]] = []
    /// Made by `start`, once connections are tracked.
    private(set) var countdownStreams: CountdownStreams!
    private lazy var flushTimer = EventTimer(loop: loop) { [unowned self] in self.flushLog() }
    private lazy var drainTimer = EventTimer(loop: loop) { [unowned self] in self.finishDraining() }
    private var drainDeadline = ContinuousClock.now
    private var memoryTrim = MemoryTrim()

    /// `requestLimiter`: the server's one count of `--ip-max-requests`, shared by its workers.
    init(index: Int, loop: EventLoop, configuration: ServerConfiguration, gate: GateConfiguration, requestLimiter: RequestLimiter?) {
        self.loop = loop
        self.configuration = configuration
        log = AccessLog(level: configuration.logLevel)
        self.gate = GateWorker(
            loop: loop, configuration: gate, logger: log.gateLogger(worker: index), requestLimiter: requestLimiter)
        nextRequestID = UInt64(index) << 48 | UInt64.random(in: 0..<(1 << 32))
        checksHost = configuration.checksHost
        bodyBuffer.reserveCapacity(configuration.maxBodyBytes)
    }

    /// Opens this worker's listener and starts serving; returns the port it listens on. Runs on the loop.
    func start(port: Int) throws(ConfigurationError) -> Int {
        let opened = try Listener.open(on: loop.base, host: configuration.host, port: port)
        allowedOrigins = configuration.allowedOrigins(port: opened.port).map { Array($0.utf8) }
        countdownStreams = CountdownStreams(
            loop: loop, gate: gate, metrics: metrics, maxConnections: configuration.maxConnectionsPerWorker,
            heartbeatInterval: configuration.streamHeartbeatInterval)
        guard let connections = ConnectionTracker(worker: self, listener: opened.listener) else {
            throw ConfigurationError(field: "port", message: "cannot serve HTTP: out of memory")
        }
        self.connections = connections
        memoryGuard = ConnectionMemoryGuard(
            loop: loop, budget: ConnectionMemoryBudget(workers: configuration.workers, total: configuration.connectionMemoryBytes),
            connections: connections, metrics: metrics, log: log)
        acceptPause = AcceptPause(loop: loop, listener: opened.listener, connections: connections, metrics: metrics, log: log)
        flushTimer.schedule(after: .milliseconds(200))
        return opened.port
    }

    /// Stops accepting, ends every event stream, lets requests in flight finish until
    /// `deadline`, then closes everything and stops the loop. Runs on the loop.
    func drain(until deadline: ContinuousClock.Instant) {
        acceptPause?.detach()
        acceptPause = nil
        connections?.stopAccepting()  // also closes the listening socket
        countdownStreams?.shutDown()
        drainDeadline = deadline
        finishDraining()
    }

    private func finishDraining() {
        // An answer the socket did not take whole is written on later loop passes:
        // closing before then would cut it.
        let unwritten = connections?.isBusy ?? false
        let inFlight = metrics.value(.inFlight)
        guard (inFlight == 0 && !unwritten) || ContinuousClock.now >= drainDeadline else {
            return drainTimer.schedule(after: .milliseconds(10))
        }
        if inFlight > 0 { log.message(.warning, "drain timeout: closing \(inFlight) requests in flight") }
        close()
        loop.stop()
    }

    /// Closes the Redis connection, then every client connection (`drain` detached the
    /// listener's pause). Runs on the loop.
    private func close() {
        flushTimer.cancel()
        drainTimer.cancel()
        // First: closing the gate fails the calls still waiting on Redis at once, and
        // their requests are answered (503) while their connections are still open.
        gate.close()
        log.flush()
        memoryGuard?.detach()
        memoryGuard = nil
        connections?.close()
        connections = nil
    }

    /// Housekeeping every 200 ms: the log, the memory budget, memory given back.
    private func flushLog() {
        log.flush()
        memoryGuard?.check()
        memoryTrim.check(openConnections: metrics.value(.openConnections), held: memoryGuard?.held ?? 0)
        flushTimer.schedule(after: .milliseconds(200))
    }

    // MARK: - Requests

    func handle(_ request: HTTPRequest) {
        route(begin(request))
    }

    /// A request the framing refused (bad syntax, too large, smuggling): answered, and closed.
    func refused(_ request: HTTPRequest, status: Int, message: String) {
        let error: APIError = switch status {
        case 431: .headerTooLarge("the request head (request line and headers) may be at most \(configuration.maxHeaderBytes) bytes")
        case 413: .bodyTooLarge("the body may be at most \(configuration.maxBodyBytes) bytes")
        default: .badRequest(message)
        }
        begin(request).respond(error)  // the framing closes the connection after it
    }

    private func begin(_ request: HTTPRequest) -> Exchange {
        let started = ContinuousClock.now
        nextRequestID &+= 1
        metrics.add(.inFlight)
        let (path, query) = request.target
        return Exchange(
            worker: self, request: request, started: started, id: nextRequestID, method: request.method, path: path, query: query)
    }

    /// Records an answered request; a streamed one (SSE) is recorded once its head is sent.
    func finish(_ exchange: Exchange, status: Int) {
        let elapsed = ContinuousClock.now - exchange.started
        metrics.add(.inFlight, -1)
        metrics.observe(latency: elapsed, status: status)
        log.request(method: exchange.method.rawValue, path: exchange.path, status: status, duration: elapsed, id: exchange.id)
    }
}

/// One request on its way through a worker, its method and target read once; a handler's
/// once the router let it through (a POST's body is in `worker.bodyBuffer`).
struct Exchange {
    unowned let worker: Worker
    let request: HTTPRequest
    let started: ContinuousClock.Instant
    let id: UInt64
    let method: HTTPRequest.Method
    let path: Substring
    let query: Substring?
    /// The caller identity the request's idempotency keys are scoped to (`SendRequest.caller`).
    var caller = ""
    /// The path's `{parameter}` segment as sent (percent-encoded); "" on a path without one.
    var parameter: Substring = ""

    var gate: GateWorker { worker.gate }

    /// Sends a JSON body written by `write`, and records the request.
    func respond(status: Int, headers: [(String, String)] = [], write: (inout JSONWriter) -> Void) {
        worker.json.reset()
        write(&worker.json)
        respond(status: status, headers: headers, body: worker.json.bytes)
    }

    /// Sends `body`, and records the request.
    func respond(status: Int, headers: [(String, String)] = [], body: [UInt8], contentType: String = "application/json; charset=utf-8") {
        worker.responseHeaders.removeAll()
        for (name, value) in headers { worker.responseHeaders.add(name, value) }
        // The id ties a response to its log line, so it is sent when that line is written.
        if worker.log.enabled(.info) { worker.responseHeaders.add("X-Request-Id", String(id, radix: 16)) }
        // Recorded before the answer leaves: a client that has it and then asks /metrics
        // (perhaps on another worker) must find it counted.
        worker.finish(self, status: status)
        let queued = HTTPResponder.send(request, status: status, headers: worker.responseHeaders, body: body, contentType: contentType)
        if queued { worker.metrics.add(.answersQueued) }
    }

    func respond(_ error: APIError, headers: [(String, String)] = []) {
        respond(status: error.status, headers: headers) { error.writeJSON(to: &$0) }
    }
}
