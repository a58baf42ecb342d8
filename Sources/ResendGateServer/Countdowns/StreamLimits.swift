/// How many event streams a worker keeps open. A stream holds a connection (and its
/// descriptor) for as long as its countdown runs, and a countdown token needs no API
/// key: without caps one token opened streams until the worker ran out of descriptors.
/// Past a cap the OLDEST stream is closed with the `shutdown` event (reconnect after 1 s),
/// never the new one refused: a page that reloads keeps its countdown.
struct StreamLimits: Sendable, Equatable {
    /// Streams of one countdown token on one worker (tabs of one page, and reconnects
    /// whose old connection has not closed yet).
    var perToken = 4
    /// Streams on one worker, of every token: half its connection cap, so streams never
    /// hold every connection and a plain request (a `/healthz`) still gets in.
    var perWorker: Int

    init(perWorker: Int, perToken: Int = 4) {
        self.perWorker = max(1, perWorker)
        self.perToken = max(1, perToken)
    }

    /// The limits for a worker capped at `maxConnections` connections.
    init(maxConnections: Int) {
        self.init(perWorker: maxConnections / 2)
    }
}

extension CountdownStreams {
    /// Before a stream of `token` opens: closes the token's oldest streams past its cap,
    /// then the worker's oldest past its cap.
    func makeRoom(for token: String) {
        while streamCount(of: token) >= limits.perToken, evictOldest(of: token) {}
        while count >= limits.perWorker, evictOldest() {}
    }
}
