import Synchronization

/// Counts each client address's requests against a `RequestRate` in memory, before any
/// Redis work a flood would cost. One limiter is shared by a server's workers (one each let
/// a client make the rate times the workers), as nginx's `limit_req` zone is. The generic
/// cell rate algorithm keeps one instant per address: `count` at once, then one each
/// `period / count`.
///
/// Addresses are spread by hash over `shardCount` bounded caches, each behind its own lock,
/// so workers rarely meet. At most `capacity` addresses are kept; the least recently seen
/// are forgotten first, which only lets a forgotten address ask afresh.
public final class RequestLimiter: Sendable {
    private let interval: Int64
    private let tolerance: Int64
    private let now: @Sendable () -> Int64
    private let shards: [Shard]

    /// How many shards the addresses are spread over.
    static let shardCount = 16

    /// A limiter for `rate`, keeping at most about `capacity` addresses.
    public convenience init(rate: RequestRate, capacity: Int = 65_536) {
        self.init(rate: rate, capacity: capacity, now: RequestLimiter.monotonicMilliseconds)
    }

    /// `now`: a monotonic clock in ms (injectable for tests).
    init(rate: RequestRate, capacity: Int = 65_536, now: @escaping @Sendable () -> Int64) {
        let period = max(1, rate.period.wholeMilliseconds)
        interval = max(1, period / Int64(rate.count))
        tolerance = period - interval
        self.now = now
        let perShard = max(2, capacity / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard(capacity: perShard) }
    }

    /// Nil when `address` may make this request (it is counted), else the ms until it may.
    /// Safe from any thread.
    func admit(_ address: String) -> Int64? {
        let at = now()
        let shard = shards[Int(UInt(bitPattern: address.hashValue) % UInt(Self.shardCount))]
        return shard.cache.withLock { cache in
            let arrival = max(cache.value(for: address) ?? at, at)
            if arrival - at > tolerance { return arrival - at - tolerance }
            cache.insert(arrival + interval, for: address, bytes: address.utf8.count + 64)
            return nil
        }
    }

    /// How many addresses are kept (for tests: the cache is bounded).
    var addresses: Int { shards.reduce(0) { total, shard in total + shard.cache.withLock { $0.count } } }

    @Sendable static func monotonicMilliseconds() -> Int64 {
        (ContinuousClock.now - Self.origin).wholeMilliseconds
    }

    private static let origin = ContinuousClock.now

    /// One shard's addresses and their next instants, behind its lock.
    private final class Shard: Sendable {
        let cache: Mutex<GenerationalCache<String, Int64>>

        init(capacity: Int) {
            cache = Mutex(GenerationalCache(maximumEntries: capacity, maximumBytes: capacity * 128))
        }
    }
}
