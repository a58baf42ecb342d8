#if canImport(Glibc)
import Glibc
#endif

/// How many client connections the open-file limit (`RLIMIT_NOFILE`) leaves room for.
/// Each client connection holds one descriptor; past the limit `accept()` fails
/// (EMFILE), so a cap above it cannot be reached, only run into.
public struct ConnectionBudget: Sendable, Equatable {
    /// The soft `RLIMIT_NOFILE` the budget was made for.
    public let openFileLimit: Int
    public let workers: Int
    /// The largest cap per worker anyone may set or derive.
    public static let maximumPerWorker = 1_000_000

    /// A budget for `workers` under `openFileLimit` (by default this process's own).
    public init(workers: Int, openFileLimit: Int = ConnectionBudget.currentOpenFileLimit()) {
        self.workers = max(1, workers)
        self.openFileLimit = openFileLimit
    }

    /// Descriptors kept for everything but client connections: standard streams, the
    /// runtime's own (Dispatch, signals), and per worker its listener, event loop
    /// (epoll, wake-up pipe and eventfd) and Redis connections (one, or one per master
    /// of a Redis Cluster, or two more with Sentinel); 16 a worker covers about ten
    /// masters. Measured: 22 descriptors in all for 2 workers on one Redis.
    public var reserved: Int { 32 + 16 * workers }

    /// The default connection cap per worker: what the limit leaves after `reserved`, shared
    /// evenly among the workers (each worker has its own cap), at least 1.
    public var defaultPerWorker: Int {
        min(Self.maximumPerWorker, max(1, (openFileLimit - reserved) / workers))
    }

    /// Whether `perWorker` connections on every worker fit under the limit.
    public func fits(perWorker: Int) -> Bool {
        perWorker <= defaultPerWorker
    }

    /// What the server says at start about the cap in force.
    public func summary(perWorker: Int, derived: Bool) -> String {
        var text = "connection cap: \(perWorker) per worker, \(perWorker * workers) in all"
        if derived {
            text += " (RLIMIT_NOFILE \(openFileLimit), less \(reserved) kept for Redis, listeners and logs)"
        } else if !fits(perWorker: perWorker) {
            text += " (as configured); RLIMIT_NOFILE \(openFileLimit) leaves room for about \(defaultPerWorker) per worker:"
                + " past that, accepting pauses and idle connections are closed"
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
