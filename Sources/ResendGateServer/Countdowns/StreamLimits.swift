/// How many event streams a worker keeps open. A stream holds a connection (and its
/// descriptor) for as long as its countdown runs, and a countdown token needs no API
/// key: without caps one token opened streams until the worker ran out of descriptors.
/// Past a cap the OLDEST stream is closed with the `shutdown` event (reconnect after 1 s),
/// never the new one refused: a page that reloads keeps its countdown.
struct StreamLimits: Sendable, Equatable {
    /// Streams of one countdown token on one worker (tabs of one page, and reconnects
    /// whose old connection has not closed yet).
    let perToken = 4
    /// Streams on one worker, of every token: half its connection cap, so streams never
    /// hold every connection and a plain request (a `/healthz`) still gets in.
    let perWorker: Int

    /// The limits for a worker capped at `maxConnections` connections.
    init(maxConnections: Int) {
        perWorker = max(1, maxConnections / 2)
    }
}
