import CHTTPConnection
import CLibevent
import GateEventLoop
import RedisClient
import ResendGate

/// Keeps a worker's open connections under its cap without letting idle ones
/// starve real clients: when a new connection would pass the cap, the oldest
/// connection with no request being served is closed to make room.
///
/// libevent 2.1's evhttp has no hook for a new connection. It does let us make
/// each connection's bufferevent (`evhttp_set_bevcb`), and it stores the new
/// connection as that bufferevent's callback argument. So each bufferevent is
/// noted when made, and at the end of the same loop pass (before any I/O on it can
/// run) the connection behind it is adopted: it gets a close callback and a place
/// in the eviction order. libevent accepts every waiting connection in one go, so
/// a burst is adopted as it arrives: making each bufferevent adopts the ones made
/// before it and closes the oldest idle connection when at the cap. Otherwise a
/// burst would pass the cap, and the open-file limit it is derived from, before any
/// of it was adopted.
final class ConnectionTracker {
    private struct Entry {
        let sequence: UInt64
        var busy: Int
        /// Whether a request has reached it: until then it holds nothing but its own
        /// state, and its client may be sending its first request right now.
        var served = false
    }

    private let limit: Int
    private let metrics: WorkerMetrics
    private var fresh: [OpaquePointer] = []
    private var hook: OpaquePointer!
    private var entries: [OpaquePointer: Entry] = [:]
    /// Oldest first; entries of closed connections are skipped lazily.
    private var order = FIFO<(sequence: UInt64, connection: OpaquePointer)>()
    private var nextSequence: UInt64 = 0
    /// Extra work to do when a connection closes (a streaming response's clean-up).
    /// The tracker owns each connection's one evhttp close callback, so others ask here.
    private var closeObservers: [OpaquePointer: () -> Void] = [:]
    /// Told of every connection adopted and closed (the request deadlines).
    weak var lifecycleObserver: RequestDeadlines?
    /// Closes the oldest event stream to make room when every connection is busy (streams
    /// are busy for their whole life); false when there is none.
    var evictStream: (() -> Bool)?

    init(loop: EventLoop, http: OpaquePointer, limit: Int, metrics: WorkerMetrics) {
        self.limit = limit
        self.metrics = metrics
        let context = Unmanaged.passUnretained(self).toOpaque()
        hook = event_new(loop.base, -1, 0, { _, _, context in
            Unmanaged<ConnectionTracker>.fromOpaque(context!).takeUnretainedValue().adoptFresh()
        }, context)
        evhttp_set_bevcb(http, { base, context in
            let tracker = Unmanaged<ConnectionTracker>.fromOpaque(context!).takeUnretainedValue()
            // The connections made before this one in the same accept burst are whole
            // by now: adopt them, then make room for this one.
            tracker.adoptFresh()
            if tracker.entries.count >= tracker.limit { tracker.makeRoom() }
            // No BEV_OPT_CLOSE_ON_FREE (evhttp's own default): evhttp then closes the
            // socket as it frees the connection, where the option would leave it open
            // until libevent finalizes the bufferevent after the accept burst, so an
            // eviction would free no descriptor for the burst's next accept.
            let bufferevent = bufferevent_socket_new(base, -1, 0)
            if let bufferevent {
                // Whatever evhttp does with the connection, it holds at most 64 KiB of
                // what its client sent (see CHTTPConnection).
                rg_http_limit_input(bufferevent)
                if tracker.fresh.isEmpty { event_active(tracker.hook, 0, 0) }
                tracker.fresh.append(bufferevent)
            }
            return bufferevent
        }, context)
    }

    deinit {
        event_free(hook)
    }

    /// A request arrived on `request`'s connection: it is not idle until the
    /// response has been written.
    func requestStarted(_ request: UnsafeMutablePointer<evhttp_request>) {
        guard let connection = evhttp_request_get_connection(request), entries[connection] != nil else { return }
        entries[connection]!.busy += 1
        entries[connection]!.served = true
        evhttp_request_set_on_complete_cb(request, { request, context in
            guard let request, let connection = evhttp_request_get_connection(request) else { return }
            let tracker = Unmanaged<ConnectionTracker>.fromOpaque(context!).takeUnretainedValue()
            if let busy = tracker.entries[connection]?.busy { tracker.entries[connection]!.busy = max(0, busy - 1) }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether a connection has a request whose response is not yet fully written
    /// (evhttp calls the completion callback once the output buffer is drained).
    var hasUnwrittenResponses: Bool {
        entries.values.contains { $0.busy > 0 }
    }

    private func adoptFresh() {
        guard !fresh.isEmpty else { return }
        let batch = fresh
        fresh.removeAll(keepingCapacity: true)
        for bufferevent in batch {
            var argument: UnsafeMutableRawPointer?
            bufferevent_getcb(bufferevent, nil, nil, nil, &argument)
            guard let connection = argument.map(OpaquePointer.init) else { continue }
            if entries.count >= limit { makeRoom() }
            nextSequence += 1
            entries[connection] = Entry(sequence: nextSequence, busy: 0)
            order.append((nextSequence, connection))
            metrics.add(.openConnections)
            if order.count > 2 * entries.count + 1024 {
                order.removeAll { entries[$0.connection]?.sequence != $0.sequence }
            }
            evhttp_connection_set_closecb(connection, { connection, context in
                guard let connection else { return }
                Unmanaged<ConnectionTracker>.fromOpaque(context!).takeUnretainedValue().closed(connection)
            }, Unmanaged.passUnretained(self).toOpaque())
            lifecycleObserver?.opened(connection)
        }
    }

    /// Runs `body` once if the connection of `request` closes before
    /// `stopObservingClose` is called; false when the connection is unknown.
    @discardableResult
    func observeClose(of request: UnsafeMutablePointer<evhttp_request>, _ body: @escaping () -> Void) -> Bool {
        guard let connection = evhttp_request_get_connection(request), entries[connection] != nil else { return false }
        closeObservers[connection] = body
        return true
    }

    func stopObservingClose(of request: UnsafeMutablePointer<evhttp_request>) {
        guard let connection = evhttp_request_get_connection(request) else { return }
        closeObservers[connection] = nil
    }

    private func closed(_ connection: OpaquePointer) {
        closeObservers.removeValue(forKey: connection)?()
        lifecycleObserver?.closed(connection)
        guard entries.removeValue(forKey: connection) != nil else { return }
        metrics.add(.openConnections, -1)
    }

    /// Closes up to `count` of the oldest event streams (each with its `shutdown` event);
    /// returns how many it closed.
    func evictStreams(upTo count: Int) -> Int {
        var closed = 0
        while closed < count, evictStream?() == true { closed += 1 }
        return closed
    }

    /// Whether `connection` has a request being served (or a stream) on it.
    func isServing(_ connection: OpaquePointer) -> Bool {
        (entries[connection]?.busy ?? 0) > 0
    }

    /// At the cap: the oldest idle connection is closed, or else the oldest event stream
    /// (which gets its `shutdown` event first), so that streams cannot hold every slot.
    private func makeRoom() {
        if !evictOldestIdle() { _ = evictStream?() }
    }

    /// Closes up to `count` of the oldest connections that are not being served (out
    /// of descriptors, to make room); returns how many it closed.
    func evictIdle(upTo count: Int) -> Int {
        var closed = 0
        while closed < count && evictOldestIdle() { closed += 1 }
        return closed
    }

    /// Closes connections until about `bytes` of what libevent holds for them is freed
    /// (over the memory budget): first every connection stuck with unsent bytes (an
    /// answer the socket would not take, or a stream more than
    /// `CountdownStreams.maxUnsentBytes` behind: a client that does not read) stops
    /// reading, and those holding the most are closed; then, oldest first, the connections
    /// still sending a request (its headers and body are held); then idle ones that have
    /// been answered before, unless their next request waits in the socket unread. A
    /// request being worked on, a stream whose client reads (its last frame waiting for the
    /// loop to write it), and a connection that has been sent nothing yet are never cut:
    /// the last holds only its own state (the connection cap bounds how many there are),
    /// and its client may be sending a request right now. Closing it freed nothing worth
    /// having and left a client that reads with no answer (issue 23: a fresh `/healthz`
    /// under a crowd that never read, when the stuck connections alone did not bring the
    /// worker under its budget). Returns how many it closed.
    func shed(bytes: Int) -> Int {
        var stuck: [(held: Int, connection: OpaquePointer)] = []
        for connection in entries.keys {
            guard let bufferevent = evhttp_connection_get_bufferevent(connection) else { continue }
            let output = evbuffer_get_length(bufferevent_get_output(bufferevent))
            guard output > CountdownStreams.maxUnsentBytes || rg_http_answer_waits(bufferevent) != 0 else { continue }
            bufferevent_disable(bufferevent, Int16(EV_READ))
            stuck.append((output + evbuffer_get_length(bufferevent_get_input(bufferevent)), connection))
        }
        stuck.sort { $0.held > $1.held }
        var freed = 0
        var closed = 0
        for candidate in stuck where freed < bytes {
            freed += close(candidate.connection, holding: candidate.held)
            closed += 1
        }
        guard freed < bytes else { return closed }
        // Those not being served, oldest first: still sending a request, then answered before.
        var receiving: [OpaquePointer] = [], answered: [OpaquePointer] = []
        for (connection, entry) in entries.sorted(by: { $0.value.sequence < $1.value.sequence }) where entry.busy == 0 {
            if isReceiving(connection) {
                receiving.append(connection)
            } else if entry.served && !hasUnreadBytes(connection) {
                answered.append(connection)
            }
        }
        for connection in receiving + answered where freed < bytes && entries[connection] != nil {
            freed += close(connection, holding: buffered(connection))
            closed += 1
        }
        return closed
    }

    /// Whether part of a request has arrived on `connection` (or waits in its input).
    private func isReceiving(_ connection: OpaquePointer) -> Bool {
        if let deadlines = lifecycleObserver { return deadlines.isReceiving(connection) }
        guard let bufferevent = evhttp_connection_get_bufferevent(connection) else { return false }
        return evbuffer_get_length(bufferevent_get_input(bufferevent)) > 0
    }

    /// What a connection's bufferevent holds, in and out.
    private func buffered(_ connection: OpaquePointer) -> Int {
        guard let bufferevent = evhttp_connection_get_bufferevent(connection) else { return 0 }
        return evbuffer_get_length(bufferevent_get_input(bufferevent)) + evbuffer_get_length(bufferevent_get_output(bufferevent))
    }

    /// Closes `connection`; returns what that freed: the request state libevent frees
    /// at once, and its buffers (`holding`), which it frees at the end of the loop pass.
    private func close(_ connection: OpaquePointer, holding: Int) -> Int {
        let before = Int(rg_memory_thread_bytes())
        evhttp_connection_free(connection)  // its close callback forgets it
        return max(0, before - Int(rg_memory_thread_bytes())) + holding
    }

    /// The oldest connection not being served, or nil. A connection whose client sent a
    /// request that waits in the socket, unread (a fresh client asking, on a loop that has
    /// been busy), is about to be served: it is never taken. One receiving a request, or
    /// one with nothing waiting, is.
    private func oldestIdle() -> OpaquePointer? {
        var skipped: [(sequence: UInt64, connection: OpaquePointer)] = []
        defer { for entry in skipped.reversed() { order.prepend(entry) } }
        while let candidate = order.popFirst() {
            guard let entry = entries[candidate.connection], entry.sequence == candidate.sequence else { continue }
            if entry.busy > 0 || (!isReceiving(candidate.connection) && hasUnreadBytes(candidate.connection)) {
                skipped.append(candidate)
                continue
            }
            return candidate.connection
        }
        return nil
    }

    /// Whether bytes its client sent wait in the socket of `connection`, unread by libevent:
    /// with no request being received, the start of one whose answer the client waits for.
    private func hasUnreadBytes(_ connection: OpaquePointer) -> Bool {
        guard let bufferevent = evhttp_connection_get_bufferevent(connection) else { return false }
        return rg_http_unread_bytes(bufferevent) > 0
    }

    /// Closes the oldest connection that is not being served; if every one is
    /// busy, none is closed (false) and the cap is exceeded briefly rather than
    /// cutting a response.
    @discardableResult
    private func evictOldestIdle() -> Bool {
        guard let oldest = oldestIdle() else { return false }
        metrics.add(.evictedConnections)
        evhttp_connection_free(oldest)  // its close callback forgets it
        return true
    }
}
