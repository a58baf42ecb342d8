/// What all client connections may make the server hold (connection state, request
/// buffers, unsent answers and stream frames, libevent's events), counted as allocated.
/// One connection is bounded (64 KiB ahead, one answer unsent), but not many: 1 500
/// header lines of 5 bytes take about 170 KB, so 2 000 slow clients took 300 MB. Past its
/// even share a worker closes connections down to three quarters of it (`lowWater`); which
/// ones, and which never, is `ConnectionTracker.shed`'s to say.
public struct ConnectionMemoryBudget: Sendable, Equatable {
    /// The default `--max-connection-memory`: with the ~34 MB a started server takes and what
    /// glibc keeps until trimmed, RSS stays under 64 MB.
    public static let defaultTotal = 16 << 20

    /// All workers' connections together, in bytes.
    public let total: Int
    public let workers: Int

    public init(workers: Int, total: Int = ConnectionMemoryBudget.defaultTotal) {
        self.workers = max(1, workers)
        self.total = max(1 << 20, total)
    }

    /// One worker's share: past it, it closes connections.
    public var perWorker: Int { total / workers }

    /// Where closing stops: room for new clients before the next shedding.
    public var lowWater: Int { perWorker / 4 * 3 }

    /// What an idle connection is reckoned to cost: 2.1 KB was measured on evhttp; our
    /// framing holds about 0.6 KB, so the rest is headroom for what connections hold.
    public static let idleConnectionBytes = 2 << 10

    /// The default cap per worker: half its share for connections themselves, half for
    /// what they hold, so the cap closes idle ones before the budget must close any.
    public var connectionsPerWorker: Int { max(1, perWorker / 2 / Self.idleConnectionBytes) }

    /// What the server says at start.
    public var summary: String {
        "connection memory budget: \(total >> 20) MiB in all, \(perWorker >> 10) KiB per worker"
            + " (past it, the connections holding the most and the oldest idle ones are closed)"
    }
}
