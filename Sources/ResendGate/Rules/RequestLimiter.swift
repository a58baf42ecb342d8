/// Counts each client address's requests against a `RequestRate`, in this worker's memory:
/// the cheapest place, before any Redis work, which is what a flood of requests would
/// cost. Per worker, so a server of W workers lets an address make at most W times the
/// rate (a client's connections are spread over the workers), and each gate counts on its
/// own. The generic cell rate algorithm keeps one instant per address: `count` requests
/// at once, then one each `period / count`. At most `capacity` addresses are kept (the
/// least recently seen are forgotten first, which only ever lets a forgotten address ask
/// afresh). Confined to one loop.
final class RequestLimiter {
    private let interval: Int64
    private let tolerance: Int64
    private let now: () -> Int64
    private var cache: GenerationalCache<String, Int64>

    /// `now`: a monotonic clock in ms (injectable for tests).
    init(rate: RequestRate, capacity: Int = 65_536, now: @escaping () -> Int64 = RequestLimiter.monotonicMilliseconds) {
        let period = max(1, rate.period.wholeMilliseconds)
        interval = max(1, period / Int64(rate.count))
        tolerance = period - interval
        self.now = now
        cache = GenerationalCache(maximumEntries: capacity, maximumBytes: capacity * 128)
    }

    /// Nil when `address` may make this request (it is counted), else the ms until it may.
    func admit(_ address: String) -> Int64? {
        let at = now()
        let arrival = max(cache.value(for: address) ?? at, at)
        if arrival - at > tolerance { return arrival - at - tolerance }
        cache.insert(arrival + interval, for: address, bytes: address.utf8.count + 64)
        return nil
    }

    /// How many addresses are kept (for tests: the cache is bounded).
    var addresses: Int { cache.count }

    static func monotonicMilliseconds() -> Int64 {
        let instant = ContinuousClock.now - Self.origin
        return instant.wholeMilliseconds
    }

    private static let origin = ContinuousClock.now
}

extension Decision {
    /// The refusal of a request over `--ip-max-requests`: decided in memory, so its
    /// `server_time` is the gate's clock; no countdown token (no cooldown was met).
    static func tooManyRequests(_ request: SendRequest, _ policy: CompiledPolicy, wait: Int64, quota: Int?) -> Decision {
        var decision = Decision(
            allowed: false, reason: .tooManyRequests, phone: request.phone, purpose: request.purpose,
            retryAfterMilliseconds: max(1, wait), serverTimeMilliseconds: wallClockMilliseconds(), sendsInWindow: 0,
            nextRetryAfterMilliseconds: policy.ladderMilliseconds[0])
        decision.budgetLimit = quota
        return decision
    }
}
