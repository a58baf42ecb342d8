import GateEventLoop
/// Where the gate's keys live: one Redis (directly, or the master that Sentinels name)
/// or a Redis Cluster. Confined to its loop; the gate talks to Redis only through it.
public final class RedisStore {
    private enum Backend {
        case single(RedisConnection)
        case cluster(RedisClusterClient)
    }

    private let backend: Backend
    private let loop: EventLoop
    private let configuration: RedisConfiguration

    /// Starts connecting on `loop` (call on its thread). `logger` hears of reconnects,
    /// Sentinel master switches, cluster slot re-maps and script reloads; never of a number.
    public init(loop: EventLoop, configuration: RedisConfiguration, scripts: [RedisScript], logger: GateLogger = .off) {
        self.loop = loop
        self.configuration = configuration
        if case .cluster(let seeds) = configuration.endpoint {
            backend = .cluster(RedisClusterClient(loop: loop, seeds: seeds, configuration: configuration, scripts: scripts, logger: logger))
        } else {
            backend = .single(RedisConnection(loop: loop, configuration: configuration, scripts: scripts, logger: logger))
        }
    }

    /// True on a Redis Cluster, where one script may only touch keys of one slot.
    public var isCluster: Bool {
        if case .cluster = backend { true } else { false }
    }

    /// Readiness, errors and reconnects, readable from any thread.
    public var statistics: RedisStatistics {
        switch backend {
        case .single(let connection): connection.statistics
        case .cluster(let cluster): cluster.statistics
        }
    }

    /// Calls `script`; on a cluster, on the master of `slotKey`'s slot (made only there).
    public func evaluate(
        _ script: RedisScript, slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping RedisConnection.Completion
    ) {
        switch backend {
        case .single(let connection): connection.evaluate(script, build, completion: completion)
        case .cluster(let cluster): cluster.evaluate(script, slotKey: slotKey(), build, completion: completion)
        }
    }

    /// Sends one command; on a cluster, to the master of `slotKey`'s slot (made only there).
    public func send(
        slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping RedisConnection.Completion
    ) {
        switch backend {
        case .single(let connection): connection.send(build, completion: completion)
        case .cluster(let cluster): cluster.send(slotKey: slotKey(), build, completion: completion)
        }
    }

    /// Whether Redis answers `PING` now (every master, on a cluster), even one that may
    /// evict keys (`statistics.evictionRefusal` says that).
    public func ping(_ completion: @escaping (Bool) -> Void) {
        switch backend {
        case .single(let connection):
            connection.sendRegardless({ $0.append("PING") }) { result in
                if case .success(.status("PONG")) = result { completion(true) } else { completion(false) }
            }
        case .cluster(let cluster):
            cluster.pingMasters(completion)
        }
    }

    /// Follows `channel` on a connection of its own: `onMessage` gets each message's
    /// payload, `onSubscribed` runs whenever the subscription is (again) in place.
    /// One Redis: that server; Sentinels: the master they named last (a replica gets the
    /// master's publishes too, so a failover loses only what is published while it
    /// reconnects); a cluster: any node, the seeds in turn (a `PUBLISH` reaches every
    /// node of a cluster). Close it with `close()`.
    package func subscribe(
        channel: String, onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void
    ) -> RedisChannelSubscription {
        let endpoint: (Int) -> RedisConfiguration.Endpoint?
        switch (backend, configuration.endpoint) {
        case (.single(let connection), .sentinel):
            endpoint = { [unowned connection] _ in
                connection.sentinelMaster.map { .tcp(host: $0.host, port: $0.port) }
            }
        case (_, .cluster(let seeds)):
            endpoint = { attempt in .tcp(host: seeds[attempt % seeds.count].host, port: seeds[attempt % seeds.count].port) }
        case (_, let fixed):
            endpoint = { _ in fixed }
        }
        return RedisChannelSubscription(
            loop: loop, channel: channel, configuration: configuration, endpoint: endpoint,
            onMessage: onMessage, onSubscribed: onSubscribed)
    }

    public func close() {
        switch backend {
        case .single(let connection): connection.close()
        case .cluster(let cluster): cluster.close()
        }
    }
}
