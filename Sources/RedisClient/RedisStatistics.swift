import Synchronization

/// A connection's health counters, written on its loop and readable from any
/// thread (for `/metrics` and `/readyz`).
public final class RedisStatistics: Sendable {
    private let ready = Atomic<Bool>(false)
    private let errors = Atomic<Int>(0)
    private let reconnects = Atomic<Int>(0)

    public init() {}

    /// Whether the connection is set up and answering.
    public var isReady: Bool { ready.load(ordering: .relaxed) }
    /// Failed connects, timeouts, lost connections and error replies.
    public var errorCount: Int { errors.load(ordering: .relaxed) }
    /// Reconnection attempts scheduled.
    public var reconnectCount: Int { reconnects.load(ordering: .relaxed) }

    func setReady(_ value: Bool) { ready.store(value, ordering: .relaxed) }
    func recordError() { errors.wrappingAdd(1, ordering: .relaxed) }
    func recordReconnect() { reconnects.wrappingAdd(1, ordering: .relaxed) }
}
