import Synchronization

/// A connection's health counters, written on its loop and readable from any
/// thread (for `/metrics` and `/readyz`).
public final class RedisStatistics: Sendable {
    private let ready = Atomic<Bool>(false)
    private let errors = Atomic<Int>(0)
    private let reconnects = Atomic<Int>(0)
    private let evicting = Atomic<Bool>(false)
    /// Why commands are refused because Redis may evict keys; nil while they are not.
    private let refusal = Mutex<String?>(nil)
    private let moved = Atomic<Int>(0)
    private let asked = Atomic<Int>(0)
    private let triedAgain = Atomic<Int>(0)

    public init() {}

    /// Whether the connection is set up and answering.
    public var isReady: Bool { ready.load(ordering: .relaxed) }
    /// Failed connects, timeouts, lost connections and error replies (a cluster's
    /// redirections are counted apart: `redirectCount(_:)`).
    public var errorCount: Int { errors.load(ordering: .relaxed) }
    /// Reconnection attempts scheduled.
    public var reconnectCount: Int { reconnects.load(ordering: .relaxed) }

    /// Whether the Redis (any master, on a cluster) may evict keys: its `maxmemory-policy`
    /// is not `noeviction`, or it would not say. True also when that is allowed.
    public var evictsKeys: Bool { evicting.load(ordering: .relaxed) }
    /// Why commands are refused because Redis may evict keys (the node and its policy),
    /// or nil: it does not evict, or `allowEvictingRedis` allows it.
    public var evictionRefusal: String? { refusal.withLock { $0 } }

    func setEviction(evicts: Bool, refusal reason: String?) {
        evicting.store(evicts, ordering: .relaxed)
        refusal.withLock { $0 = reason }
    }

    /// A Redis Cluster's redirections of a command: `MOVED` (a slot's new owner), `ASK` (a
    /// slot being migrated whose keys are not on its owner) and `TRYAGAIN` (a migrating
    /// slot holding some of a command's keys), each followed or retried, not errors.
    public enum Redirect: String, Sendable, CaseIterable {
        case moved, ask, tryagain
    }

    /// The redirections of `kind` received (each one a reply: a command may see several).
    public func redirectCount(_ kind: Redirect) -> Int {
        switch kind {
        case .moved: moved.load(ordering: .relaxed)
        case .ask: asked.load(ordering: .relaxed)
        case .tryagain: triedAgain.load(ordering: .relaxed)
        }
    }

    func recordRedirect(_ kind: Redirect) {
        switch kind {
        case .moved: moved.wrappingAdd(1, ordering: .relaxed)
        case .ask: asked.wrappingAdd(1, ordering: .relaxed)
        case .tryagain: triedAgain.wrappingAdd(1, ordering: .relaxed)
        }
    }

    func setReady(_ value: Bool) { ready.store(value, ordering: .relaxed) }
    func recordError() { errors.wrappingAdd(1, ordering: .relaxed) }
    func recordReconnect() { reconnects.wrappingAdd(1, ordering: .relaxed) }
}
