import CHTTPConnection
import Countdown
import GateEventLoop
import ResendGate

/// One worker's server-sent event streams: one shared ``CountdownCenter`` on the worker's
/// loop (one timer for every stream), one heartbeat timer, and ``CountdownReleases``,
/// which ends streams whose cooldown is released on any gate. Loop-confined.
final class CountdownStreams {
    /// What may wait unsent for one stream before its ticks and heartbeats are dropped, so
    /// a client that reads nothing cannot grow it. A tick carries the whole state, so one
    /// that catches up loses nothing; one that stays stuck meets --connection-timeout.
    static let maxUnsentBytes = 4 << 10

    // The two caps on streams. A stream holds a connection (and its descriptor) while its
    // countdown runs, and a token needs no API key: uncapped, one token opened streams until
    // the worker ran out of descriptors. Past a cap the OLDEST stream is closed with the
    // `shutdown` event (reconnect after 1 s), never the new one refused: a page that
    // reloads keeps its countdown.

    /// Streams of one token: tabs of one page, and reconnects whose old connection lingers.
    static let maxStreamsPerToken = 4
    /// Streams of the worker: half its connection cap, so a `/healthz` still gets in.
    let maxStreams: Int

    let heartbeatInterval: Duration

    let center: CountdownCenter
    private let metrics: WorkerMetrics
    private var streams: [UInt64: EventStream] = [:]
    /// Open streams oldest first (serials; those of ended streams are skipped lazily).
    private var order = FIFO<UInt64>()
    /// Each token's open streams on this worker, oldest first.
    private var streamsOfToken: [String: [UInt64]] = [:]
    private var nextSerial: UInt64 = 0
    private var heartbeat: EventTimer!
    /// Set by `shutDown`: a stream opened afterwards gets only the shutdown event.
    private var isShuttingDown = false
    private let releases: CountdownReleases

    init(loop: EventLoop, gate: GateWorker, metrics: WorkerMetrics, maxConnections: Int, heartbeatInterval: Duration) {
        maxStreams = max(1, maxConnections / 2)
        releases = CountdownReleases(gate: gate, metrics: metrics)
        self.heartbeatInterval = heartbeatInterval
        self.metrics = metrics
        let clock = SystemCountdownClock()
        center = CountdownCenter(clock: clock, scheduler: LoopCountdownScheduler(loop: loop, clock: clock))
        heartbeat = EventTimer(loop: loop) { [unowned self] in self.beat() }
    }

    /// Answers `exchange` with 200 `text/event-stream` and streams the countdown of `token`:
    /// what `reading` has left as measured at `measuredAt` (Redis's reply), its first tick
    /// written before this returns. A release publishing its cooldown's identity ends it.
    func open(_ exchange: Exchange, token: CountdownToken, reading: CountdownReading, measuredAt: CountdownInstant) {
        var headers = ResponseHeaders(capacity: 128)
        headers.add("Cache-Control", "no-store")
        headers.add("X-Accel-Buffering", "no")
        headers.add("X-Request-Id", String(exchange.id, radix: 16))
        // One stream per connection: after `done` it closes (EventSource reconnects), so no
        // keep-alive connection outlives its stream. A client that reset it meanwhile gets none.
        let connection = exchange.request.connection
        guard HTTPResponder.startStream(connection, status: 200, headers: headers, contentType: "text/event-stream; charset=utf-8") else {
            return
        }
        if isShuttingDown {
            // The server is draining: tell the client to go elsewhere at once.
            _ = CountdownEventSource.shutdown.withUnsafeBufferPointer { rg_http_stream_write(connection, $0.baseAddress, $0.count, 0, 1) }
            return rg_http_end_stream(connection)
        }
        nextSerial &+= 1
        let serial = nextSerial
        let deadline = measuredAt.advanced(by: .milliseconds(reading.retryAfterMilliseconds))
        let stream = EventStream(
            connection: connection, serial: serial, token: token, identity: reading.cooldownIdentity, owner: self, deadline: deadline)
        makeRoom(for: token.text)
        streams[serial] = stream
        order.append(serial)
        streamsOfToken[token.text, default: []].append(serial)
        metrics.add(.sseStreams)
        if !heartbeat.isScheduled { heartbeat.schedule(after: heartbeatInterval) }
        stream.start()
        if stream.isOpen { releases.follow(stream) }
    }

    /// Called by a stream once it has ended, either way.
    fileprivate func remove(_ stream: EventStream) {
        guard streams.removeValue(forKey: stream.serial) != nil else { return }
        if var ofToken = streamsOfToken[stream.token.text] {
            ofToken.removeAll { $0 == stream.serial }
            streamsOfToken[stream.token.text] = ofToken.isEmpty ? nil : ofToken
        }
        if order.count > 2 * streams.count + 1024 { order.removeAll { streams[$0] == nil } }
        releases.unfollow(stream)
        metrics.add(.sseStreams, -1)
        if streams.isEmpty { heartbeat.cancel() }
    }

    /// Before a stream of `token` opens: evicts the oldest past the token's cap, then the worker's.
    private func makeRoom(for token: String) {
        while let serials = streamsOfToken[token], serials.count >= Self.maxStreamsPerToken, let oldest = streams[serials[0]] {
            evict(oldest)
        }
        while streams.count >= maxStreams, evictOldest() {}
    }

    /// Closes the oldest stream on this worker; false if none.
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
        stream.evict()  // ends it, and so removes it
    }

    private func beat() {
        for stream in streams.values { stream.write(CountdownEventSource.heartbeat) }
        if !streams.isEmpty { heartbeat.schedule(after: heartbeatInterval) }
    }

    /// The server is shutting down: every stream, and every one opened from now on, gets
    /// the `shutdown` event (reconnect elsewhere) and ends.
    func shutDown() {
        isShuttingDown = true
        heartbeat.cancel()
        for stream in Array(streams.values) { stream.endForShutdown() }
    }
}

/// One open `GET /v1/countdowns/{token}/events` response: its connection's owner (told
/// when its client leaves) until the stream ends.
final class EventStream {
    let serial: UInt64
    let token: CountdownToken
    /// The value its cooldown key holds, which a release publishes.
    let identity: String
    /// Nil once the stream ended: never touch the connection after that.
    private var connection: OpaquePointer?
    private unowned let owner: CountdownStreams
    private var source: CountdownEventSource!

    fileprivate init(connection: OpaquePointer, serial: UInt64, token: CountdownToken, identity: String,
                     owner: CountdownStreams, deadline: CountdownInstant) {
        self.connection = connection
        self.serial = serial
        self.token = token
        self.identity = identity
        self.owner = owner
        // A countdown id of its own: a client leaving never disturbs another stream of the
        // same token, and its countdown is forgotten with it.
        source = CountdownEventSource(
            center: owner.center, countdownID: CountdownID("\(token.text)#\(serial)"), deadline: deadline,
            send: { [unowned self] frame, final in self.write(frame, final: final) },
            finish: { [unowned self] in self.letGo { rg_http_end_stream($0) } })  // after `done`: the connection then closes
    }

    fileprivate func start() {
        if let connection { rg_http_set_owner(connection, Unmanaged.passUnretained(self).toOpaque()) }
        source.start()
    }

    /// Until it ended (`done` sent, or the client gone).
    var isOpen: Bool { connection != nil }

    /// The cooldown ended early (released): `done` with `reason`, then the end.
    func end(reason: String) {
        source.end(reason: reason)
    }

    /// Writes one frame; dropped while the client is `maxUnsentBytes` behind, unless `final`.
    fileprivate func write(_ frame: [UInt8], final: Bool = false) {
        guard let connection else { return }
        _ = frame.withUnsafeBufferPointer {
            rg_http_stream_write(connection, $0.baseAddress, $0.count, CountdownStreams.maxUnsentBytes, final ? 1 : 0)
        }
    }

    /// The server is shutting down: the `shutdown` event, then the end of the response.
    func endForShutdown() { shutDown { rg_http_end_stream($0) } }

    /// The `shutdown` event as far as the socket takes it now, then the connection closed
    /// at once, to free its descriptor.
    func evict() { shutDown { rg_http_close_now($0) } }

    private func shutDown(then release: (OpaquePointer) -> Void) {
        guard connection != nil else { return }
        write(CountdownEventSource.shutdown, final: true)
        source.cancel()
        letGo(release)
    }

    /// The client went away (or timed out, or the server is closing).
    func connectionClosed() {
        source.cancel()
        letGo { rg_http_release($0) }
    }

    /// Hands the connection back with `release` and leaves the worker's streams, once.
    private func letGo(_ release: (OpaquePointer) -> Void) {
        guard let connection else { return }
        self.connection = nil
        release(connection)
        owner.remove(self)
    }
}
