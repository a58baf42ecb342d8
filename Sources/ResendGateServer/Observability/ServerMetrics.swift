import ResendGate
import Synchronization

/// One worker's counters. Written only by its own loop (relaxed atomics, so no
/// contention), read by whichever worker answers `/metrics`.
final class WorkerMetrics: Sendable {
    /// What each counts is its `/metrics` help text (`PrometheusText`).
    enum Counter: Int, CaseIterable {
        case allowed, deniedRegion, deniedNumberType
        case requests2xx, requests4xx, requests5xx
        case inFlight
        case openConnections, evictedConnections, shedConnections, connectionMemoryBytes
        case acceptPauses, answersQueued
        case latencySumMicroseconds, latencyCount
        case sseStreams, sseFollowedCooldowns, sseReleased, sseEvicted
        case lateRequests
        case allowedUnrecorded, allowedTestNumber
    }

    /// Upper bounds of the latency histogram, in seconds.
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let counters: InlineArray<32, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
    /// Refusals by reason, at its place in `DecisionReason.allCases`; from slot 32, those
    /// a rule in observe mode would have made. A new reason needs no change (room for 32).
    private let reasons: InlineArray<64, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
    private static let reasonOrder = DecisionReason.allCases
    private let buckets: InlineArray<16, Atomic<Int64>> = InlineArray { _ in Atomic(0) }
    /// Allowed sends and `verified` outcomes by calling code (conversion by calling code).
    let callingCodes = CallingCodeCounters()

    func add(_ counter: Counter, _ amount: Int64 = 1) {
        counters[counter.rawValue].wrappingAdd(amount, ordering: .relaxed)
    }

    func set(_ counter: Counter, _ value: Int64) {
        counters[counter.rawValue].store(value, ordering: .relaxed)
    }

    func value(_ counter: Counter) -> Int64 {
        counters[counter.rawValue].load(ordering: .relaxed)
    }

    /// Counts a decision by outcome and reason, and the observed rules that would have refused it.
    func record(_ decision: Decision) {
        if decision.testNumber { return add(.allowedTestNumber) }
        if let reason = decision.reason {
            reasons[Self.slot(reason, observed: false)].wrappingAdd(1, ordering: .relaxed)
        } else {
            add(.allowed)
            callingCodes.addSend(callingCode: decision.phone.countryCode)
        }
        for rule in decision.observed { reasons[Self.slot(rule, observed: true)].wrappingAdd(1, ordering: .relaxed) }
    }

    /// Sends refused by `reason`, or that it would have refused in observe mode.
    func value(_ reason: DecisionReason, observed: Bool) -> Int64 {
        reasons[Self.slot(reason, observed: observed)].load(ordering: .relaxed)
    }

    private static func slot(_ reason: DecisionReason, observed: Bool) -> Int {
        reasonOrder.firstIndex(of: reason)! + (observed ? 32 : 0)
    }

    func observe(latency: Duration, status: Int) {
        let microseconds = latency / .microseconds(1)
        let seconds = microseconds / 1_000_000
        let bucket = Self.latencyBuckets.firstIndex { seconds <= $0 } ?? Self.latencyBuckets.count
        buckets[bucket].wrappingAdd(1, ordering: .relaxed)
        add(.latencySumMicroseconds, Int64(microseconds))
        add(.latencyCount)
        switch status {
        case 200..<300: add(.requests2xx)
        case 400..<500: add(.requests4xx)
        default: add(.requests5xx)
        }
    }

    /// Requests whose latency fell in bucket `index` (the last is above every bound).
    func bucketCount(_ index: Int) -> Int64 {
        buckets[index].load(ordering: .relaxed)
    }
}
