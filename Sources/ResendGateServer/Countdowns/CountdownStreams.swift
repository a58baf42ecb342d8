import CHTTPConnection
import CLibevent
import Countdown
import GateEventLoop
import RedisClient
import ResendGate

/// One worker's server-sent event streams: ONE shared ``CountdownCenter`` ticking on
/// the worker's loop (one timer for every stream), one heartbeat timer, the open
/// streams, and ``CountdownReleases``, which ends those whose cooldown is released on
/// any gate. Loop-confined.
final class CountdownStreams {
    /// What evhttp may hold unsent for one stream (past what the kernel's socket buffer
    /// took) before its ticks and heartbeats are dropped: a client that reads nothing
    /// cannot make its stream grow. Each tick carries the whole state, so one that
    /// catches up loses nothing; and with nothing more written its write timeout runs,
    /// so a client that stays stuck is closed after --connection-timeout.
    static let maxUnsentBytes = 4 << 10

    /// A comment line this often keeps proxies from closing a quiet stream.
    let heartbeatInterval: Duration

    let clock: any CountdownClock
    let center: CountdownCenter
    private let scheduler: LoopCountdownScheduler
    private let metrics: WorkerMetrics
    private var streams: [UInt64: EventStream] = [:]
    /// Open streams oldest first (serials; those of ended streams are skipped lazily).
    private var order = FIFO<UInt64>()
    /// Each token's open streams on this worker, oldest first.
    private var streamsOfToken: [String: [UInt64]] = [:]
    let limits: StreamLimits
    private var nextSerial: UInt64 = 0
    private var heartbeat: EventTimer!
    /// Set by `shutDown`: a stream opened afterwards gets only the shutdown event.
    private(set) var isShuttingDown = false
    /// Streams by their cooldown's identity, ended when a release of it is published.
    let releases: CountdownReleases

    /// Tells a stream when its client goes away.
    private let connections: ConnectionTracker?
    private let connectionTimeout: timeval

    init(
        loop: EventLoop, gate: GateWorker, metrics: WorkerMetrics, connections: ConnectionTracker?,
        connectionTimeout: timeval, limits: StreamLimits = StreamLimits(perWorker: 5_000),
        heartbeatInterval: Duration = .seconds(15), clock: any CountdownClock = SystemCountdownClock()
    ) {
        self.limits = limits
        releases = CountdownReleases(gate: gate, metrics: metrics)
        self.clock = clock
        self.heartbeatInterval = heartbeatInterval
        self.metrics = metrics
        self.connections = connections
        self.connectionTimeout = connectionTimeout
        scheduler = LoopCountdownScheduler(loop: loop, clock: clock)
        center = CountdownCenter(clock: clock, scheduler: scheduler)
        heartbeat = EventTimer(loop: loop) { [unowned self] in self.beat() }
    }

    /// Open streams on this worker.
    var count: Int { streams.count }

    /// Answers `request` with 200 `text/event-stream` and streams the countdown of
    /// `token`, which has `remaining` left as measured at `measuredAt` (when Redis's reply
    /// arrived). The first tick is written before this returns. `identity` is the value
    /// its cooldown key holds: a release publishing it ends the stream with `done`.
    func open(_ request: HTTPRequest, token: CountdownToken, identity: String, remaining: Duration,
              measuredAt: CountdownInstant, requestID: UInt64) {
        // A client that reset its connection while the countdown was looked up: libevent
        // has detached the request and leaves it to us. No stream for nobody.
        guard evhttp_request_get_connection(request.raw) != nil else { return evhttp_request_free(request.raw) }
        nextSerial &+= 1
        let serial = nextSerial
        let responder = HTTPResponder(request: request, connectionTimeout: connectionTimeout)
        responder.header("Content-Type", "text/event-stream; charset=utf-8")
        responder.header("Cache-Control", "no-store")
        responder.header("X-Accel-Buffering", "no")
        // One stream per connection: after `done` the connection closes (EventSource
        // reconnects on a new one), so no keep-alive connection outlives its stream's state.
        responder.header("Connection", "close")
        responder.header("X-Request-Id", String(requestID, radix: 16))
        responder.startStream(status: 200)
        if isShuttingDown {
            // The server is draining: tell the client to go elsewhere at once.
            sendShutdownEvent(on: request.raw)
            evhttp_send_reply_end(request.raw)
            return
        }
        // Each stream has its own countdown id, so a client leaving never disturbs another
        // stream of the same token, and its countdown is forgotten with it.
        let stream = EventStream(
            request: request.raw, serial: serial, token: token, identity: identity, owner: self,
            connections: connections, center: center,
            countdownID: CountdownID("\(token.text)#\(serial)"), deadline: measuredAt.advanced(by: remaining))
        makeRoom(for: token.text)
        streams[serial] = stream
        order.append(serial)
        streamsOfToken[token.text, default: []].append(serial)
        metrics.add(.sseStreams)
        if !heartbeat.isScheduled { heartbeat.schedule(after: heartbeatInterval) }
        stream.start()
        if stream.isOpen { releases.follow(stream, identity: identity) }
    }

    /// Called by a stream once it has ended, either way.
    fileprivate func remove(_ stream: EventStream) {
        guard streams.removeValue(forKey: stream.serial) != nil else { return }
        if var ofToken = streamsOfToken[stream.token.text] {
            ofToken.removeAll { $0 == stream.serial }
            streamsOfToken[stream.token.text] = ofToken.isEmpty ? nil : ofToken
        }
        if order.count > 2 * streams.count + 1024 { order.removeAll { streams[$0] == nil } }
        releases.unfollow(stream, identity: stream.identity)
        metrics.add(.sseStreams, -1)
        if streams.isEmpty { heartbeat.cancel() }
    }

    /// Open streams of `token` on this worker.
    func streamCount(of token: String) -> Int {
        streamsOfToken[token]?.count ?? 0
    }

    /// Closes the oldest stream of `token` (see ``EventStream/evict()``); false if none.
    @discardableResult
    func evictOldest(of token: String) -> Bool {
        guard let serial = streamsOfToken[token]?.first, let stream = streams[serial] else { return false }
        evict(stream)
        return true
    }

    /// Closes the oldest stream on this worker; false if none.
    @discardableResult
    func evictOldest() -> Bool {
        while let serial = order.popFirst() {
            guard let stream = streams[serial] else { continue }
            evict(stream)
            return true
        }
        return false
    }

    private func evict(_ stream: EventStream) {
        metrics.add(.sseEvicted)
        stream.evict()
        // A stream whose connection could not be found is still ended (and forgotten).
        if streams[stream.serial] != nil { stream.endForShutdown() }
    }

    private func beat() {
        for stream in streams.values { stream.write(CountdownEventSource.heartbeat) }
        if !streams.isEmpty { heartbeat.schedule(after: heartbeatInterval) }
    }

    /// The server is shutting down: every open stream gets the `shutdown` event (which
    /// tells its client to reconnect, elsewhere, after `retry` ms) and is ended; its
    /// connection closes once that is written. Streams opened from now on get only that.
    func shutDown() {
        isShuttingDown = true
        heartbeat.cancel()
        for stream in Array(streams.values) { stream.endForShutdown() }
    }
}

/// Writes the final `shutdown` event of a stream, whatever is still unsent.
private func sendShutdownEvent(on request: UnsafeMutablePointer<evhttp_request>) {
    guard let chunk = evbuffer_new() else { return }
    defer { evbuffer_free(chunk) }
    let frame = CountdownEventSource.shutdown
    _ = frame.withUnsafeBytes { evbuffer_add(chunk, $0.baseAddress, $0.count) }
    evhttp_send_reply_chunk(request, chunk)
}

/// One open `GET /v1/countdowns/{token}/events` response. Owns nothing of libevent's but
/// the right to write to the request until the stream ends.
final class EventStream {
    let serial: UInt64
    let token: CountdownToken
    /// The value its cooldown key holds, which a release publishes.
    let identity: String
    /// Nil once the stream ended: never touch the request after that.
    private var request: UnsafeMutablePointer<evhttp_request>?
    private unowned let owner: CountdownStreams
    private let connections: ConnectionTracker?
    private var source: CountdownEventSource!
    private let chunk: OpaquePointer

    fileprivate init(request: UnsafeMutablePointer<evhttp_request>, serial: UInt64, token: CountdownToken,
                     identity: String, owner: CountdownStreams,
                     connections: ConnectionTracker?, center: CountdownCenter, countdownID: CountdownID,
                     deadline: CountdownInstant) {
        self.request = request
        self.serial = serial
        self.token = token
        self.identity = identity
        self.owner = owner
        self.connections = connections
        guard let chunk = evbuffer_new() else { fatalError("evbuffer_new failed: out of memory") }
        self.chunk = chunk
        source = CountdownEventSource(
            center: center, countdownID: countdownID, deadline: deadline,
            send: { [unowned self] frame, final in self.write(frame, final: final) }, finish: { [unowned self] in self.end() })
    }

    deinit {
        evbuffer_free(chunk)
    }

    fileprivate func start() {
        if let request {
            connections?.observeClose(of: request) { [unowned self] in self.connectionClosed() }
        }
        source.start()
    }

    /// Until it ended (`done` sent, or the client gone).
    var isOpen: Bool { request != nil }

    /// The cooldown ended early (released): `done` with `reason`, then the end.
    func end(reason: String) {
        source.end(reason: reason)
    }

    /// Writes one frame as a chunk of the response. A tick or heartbeat is dropped while
    /// the client is behind by more than `maxUnsentBytes`; `final` frames never are.
    fileprivate func write(_ frame: [UInt8], final: Bool = false) {
        guard let request else { return }
        if !final && rg_http_unsent_bytes(request) > CountdownStreams.maxUnsentBytes { return }
        _ = frame.withUnsafeBytes { evbuffer_add(chunk, $0.baseAddress, $0.count) }
        evhttp_send_reply_chunk(request, chunk)
    }

    /// The request being streamed, until the stream ends.
    var requestForEviction: UnsafeMutablePointer<evhttp_request>? { request }

    /// The server is shutting down: the `shutdown` event, then the end of the response.
    func endForShutdown() {
        guard request != nil else { return }
        write(CountdownEventSource.shutdown, final: true)
        source.cancel()
        end()
    }

    /// After `done`: ends the response; the connection then closes (`Connection: close`).
    private func end() {
        guard let request else { return }
        self.request = nil
        connections?.stopObservingClose(of: request)
        evhttp_send_reply_end(request)
        owner.remove(self)
    }

    /// The client went away (or timed out, or the server is shutting down).
    private func connectionClosed() {
        guard let request else { return }
        self.request = nil
        // A peer that closed, or a timeout: libevent has detached the unfinished request
        // from its connection (evhttp_connection_incoming_fail) and leaves it to us. When
        // the whole server is freed instead, the request is still attached and libevent
        // frees it right after this callback.
        if evhttp_request_get_connection(request) == nil {
            evhttp_request_free(request)
        }
        source.cancel()
        owner.remove(self)
    }
}
