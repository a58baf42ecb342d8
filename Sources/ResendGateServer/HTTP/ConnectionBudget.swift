#if canImport(Glibc)
import Glibc
#endif

/// How many client connections the open-file limit (`RLIMIT_NOFILE`) and the connection
/// memory budget leave room for: past the limit `accept()` fails (EMFILE), so a higher cap
/// is run into, never reached; past the budget, it closes connections instead of the cap.
public struct ConnectionBudget: Sendable, Equatable {
    /// The soft `RLIMIT_NOFILE` the budget was made for.
    public let openFileLimit: Int
    public let workers: Int
    /// The largest cap per worker anyone may set or derive.
    public static let maximumPerWorker = 1_000_000
    /// What all workers' connections may hold (`--max-connection-memory`), in bytes.
    public let connectionMemory: Int

    /// A budget for `workers` under `openFileLimit` (by default this process's own).
    public init(workers: Int, openFileLimit: Int = ConnectionBudget.currentOpenFileLimit(),
                connectionMemory: Int = ConnectionMemoryBudget.defaultTotal) {
        self.workers = max(1, workers)
        self.openFileLimit = openFileLimit
        self.connectionMemory = connectionMemory
    }

    /// Descriptors kept for all but clients: standard streams, the runtime's, and a worker's
    /// listener, event loop and Redis connections (one per master of a cluster, two more
    /// with Sentinel): 16 covers about ten masters. Measured: 22 for 2 workers on one Redis.
    public var reserved: Int { 32 + 16 * workers }

    /// What the open-file limit leaves after `reserved`, per worker, at least 1.
    public var descriptorsPerWorker: Int {
        min(Self.maximumPerWorker, max(1, (openFileLimit - reserved) / workers))
    }

    /// What the connection memory budget allows a worker (``ConnectionMemoryBudget``).
    public var memoryPerWorker: Int { ConnectionMemoryBudget(workers: workers, total: connectionMemory).connectionsPerWorker }

    /// The default `--max-connections`: the lower of the two.
    public var defaultPerWorker: Int { min(descriptorsPerWorker, memoryPerWorker) }

    /// What the server says at start about the cap in force.
    public func summary(perWorker: Int, derived: Bool) -> String {
        var text = "connection cap: \(perWorker) per worker, \(perWorker * workers) in all"
        let memory = "the connection memory budget (\(connectionMemory >> 20) MiB in all)"
        if derived && memoryPerWorker < descriptorsPerWorker {
            text += " (\(memory); RLIMIT_NOFILE \(openFileLimit) would allow \(descriptorsPerWorker))"
        } else if derived {
            text += " (RLIMIT_NOFILE \(openFileLimit), less \(reserved) kept for Redis, listeners and logs)"
        } else if perWorker > descriptorsPerWorker {
            text += " (as configured); RLIMIT_NOFILE \(openFileLimit) leaves room for about \(defaultPerWorker) per worker:"
                + " past that, accepting pauses and idle connections are closed"
        } else if perWorker > memoryPerWorker {
            text += " (--max-connections; RLIMIT_NOFILE \(openFileLimit)); past about \(memoryPerWorker) per worker, \(memory)"
                + " closes the oldest idle ones"
        } else {
            text += " (as configured; RLIMIT_NOFILE \(openFileLimit))"
        }
        return text
    }

    /// This process's soft `RLIMIT_NOFILE` (a large number when unlimited).
    public static func currentOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, 1 << 30))  // RLIM_INFINITY is the largest value
    }
}
