/// What every worker's client connections may make the server hold in memory, together:
/// every byte kept for them (connection state, request buffers with their header table,
/// unsent answers and stream frames, libevent's events), counted as it is allocated.
/// One connection is bounded on its own (64 KiB ahead, one answer unsent), but headers
/// and bodies that are read and not yet served are not: 1 500 header lines of 5 bytes
/// take about 170 KB, so 2 000 slow clients took 300 MB. Each worker gets an even share;
/// past it, it stops reading the connections stuck with unsent bytes and closes the ones
/// holding the most, then the oldest that are not being served, down to three quarters
/// of its share. A request being served is never cut, and a new client (a `/healthz`)
/// is the last one closed.
public struct ConnectionMemoryBudget: Sendable, Equatable {
    /// The default `--max-connection-memory`: with the ~34 MB a started server takes, and
    /// what glibc keeps of freed memory until it is trimmed, RSS stays under 64 MB.
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

    /// What an idle connection is reckoned to cost: measured 2.1 KB each with 3 000 open on
    /// evhttp; the gate's own framing holds about 0.6 KB (its state and two events, no
    /// buffer while idle), so the figure is headroom for what connections hold.
    public static let idleConnectionBytes = 2 << 10

    /// The most connections a worker holds by default: half its share for connections
    /// themselves, half for what they hold (requests, answers). Past it the oldest idle
    /// one is closed as a new one comes, before the budget has to close anything.
    public var connectionsPerWorker: Int { max(1, perWorker / 2 / Self.idleConnectionBytes) }

    /// What the server says at start.
    public var summary: String {
        "connection memory budget: \(total >> 20) MiB in all, \(perWorker >> 10) KiB per worker"
            + " (past it, the connections holding the most and the oldest idle ones are closed)"
    }
}
