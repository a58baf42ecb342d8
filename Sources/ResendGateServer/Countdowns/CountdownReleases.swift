import GateRuntime
import ResendGate

/// Ends a worker's event streams whose cooldown was released, on any gate: a release
/// publishes its cooldown key's value (`GateWorker.followReleases`), by which the streams
/// are found here. Loop-confined.
///
/// Bounded: an entry lives only while a stream follows it, and only the last
/// ``recentCapacity`` released identities are kept (for a stream opened from a lookup
/// answered just before its release, whose message came first). Releases published while
/// the subscriber is down are found when it is back, by looking every followed cooldown up.
final class CountdownReleases {
    /// Released identities kept, for the race between a lookup and its release.
    static let recentCapacity = 256
    static let releasedReason = "released"

    private let gate: GateWorker
    private let metrics: WorkerMetrics
    /// Streams by the identity of the cooldown they follow.
    private var followers: [String: [UInt64: EventStream]] = [:]
    private var recent = Set<String>()
    private var recentOrder = FIFO<String>()
    private var subscribing = false

    init(gate: GateWorker, metrics: WorkerMetrics) {
        self.gate = gate
        self.metrics = metrics
    }

    /// Ends `stream` when its cooldown's identity is released; at once if it just was.
    func follow(_ stream: EventStream) {
        let identity = stream.identity
        if !subscribing {
            subscribing = true  // from the worker's first stream on
            gate.followReleases(
                onRelease: { [weak self] identity in self?.released(identity) },
                onSubscribed: { [weak self] in self?.recheck() })
        }
        guard !recent.contains(identity) else {
            metrics.add(.sseReleased)
            return stream.end(reason: Self.releasedReason)
        }
        if followers[identity] == nil { metrics.add(.sseFollowedCooldowns) }
        followers[identity, default: [:]][stream.serial] = stream
    }

    func unfollow(_ stream: EventStream) {
        guard var streams = followers[stream.identity], streams.removeValue(forKey: stream.serial) != nil else { return }
        followers[stream.identity] = streams.isEmpty ? nil : streams
        if streams.isEmpty { metrics.add(.sseFollowedCooldowns, -1) }
    }

    /// A release, published by any gate.
    func released(_ identity: String) {
        remember(identity)
        guard let streams = followers.removeValue(forKey: identity) else { return }
        metrics.add(.sseFollowedCooldowns, -1)
        metrics.add(.sseReleased, Int64(streams.count))
        for stream in streams.values { stream.end(reason: Self.releasedReason) }
    }

    private func remember(_ identity: String) {
        guard recent.insert(identity).inserted else { return }
        recentOrder.append(identity)
        if recentOrder.count > Self.recentCapacity, let oldest = recentOrder.popFirst() { recent.remove(oldest) }
    }

    /// The subscription is (again) in place: a cooldown released meanwhile is gone (or
    /// holds another value).
    private func recheck() {
        for (identity, streams) in followers {
            guard let token = streams.values.first?.token else { continue }
            gate.countdown(token) { [weak self] result in
                switch result {
                case .success(let reading?) where reading.cooldownIdentity == identity: break
                case .success: self?.released(identity)
                case .failure: break  // Redis is away again: the next subscription re-checks
                }
            }
        }
    }
}
