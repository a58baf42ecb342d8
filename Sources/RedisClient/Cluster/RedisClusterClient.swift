import GateEventLoop
/// Sends each command to the Redis Cluster master that owns its key's slot, over one
/// connection per master. Confined to its loop.
///
/// The slot map comes from `CLUSTER SLOTS` on any node. `MOVED` updates the map for
/// that slot and retries on the new owner (and the whole map is read again soon);
/// `ASK` retries once on the named node after `ASKING`, for a slot being migrated.
/// A failed or timed-out node also has the map read again: after a failover the
/// promoted replica shows up there.
public final class RedisClusterClient {
    private let loop: EventLoop
    private let seeds: [RedisConfiguration.HostPort]
    private let configuration: RedisConfiguration
    private let scripts: [RedisScript]
    /// Each script's variant for the node an `ASK` names, by the script's SHA-1.
    private let askedVariants: [String: RedisScript]
    var nodes: [RedisConfiguration.HostPort: RedisConnection] = [:]
    var owners = [RedisConfiguration.HostPort?](repeating: nil, count: ClusterSlot.count)
    var mapKnown = false
    private var refreshing = false
    var closed = false
    private var refreshWanted = false
    private lazy var refreshTimer = EventTimer(loop: loop) { [unowned self] in self.refresh() }
    /// Readiness, errors and map refreshes, readable from any thread.
    public let statistics = RedisStatistics()
    /// Redirections (MOVED, ASK) in a row at most for one command: a slot map being
    /// updated can bounce a command a few times.
    static let maximumRetries = 25
    /// The first wait before a command that got `TRYAGAIN` is sent again, doubled after
    /// each up to `longestTryAgainWait`, for as long as the command timeout: one `MIGRATE`
    /// of a batch of keys takes milliseconds, so most commands pass at the first retries,
    /// and a slow migration is asked about about 25 times a second.
    static let firstTryAgainWait: Duration = .milliseconds(5)
    static let longestTryAgainWait: Duration = .milliseconds(40)
    /// Pending TRYAGAIN retries by number: each timer, kept alive until it fires, and the
    /// retry. Only this table holds them (a timer's action finds its own by number), so a
    /// fired retry frees its timer and what the retry holds.
    private var retries: [Int: (timer: EventTimer, retry: () -> Void)] = [:]
    private var retryCount = 0
    /// Slot re-maps go here, and each node connection's reconnects and script reloads.
    let logger: GateLogger
    /// The replicas the last map named: asked for the map after the masters.
    private var knownReplicas: [RedisConfiguration.HostPort] = []
    /// Seeds the map did not name, each logged once when its connection was closed.
    private var droppedSeeds: Set<RedisConfiguration.HostPort> = []
    /// Slots that `MOVED` gave a new owner since the map was last read, for the log.
    var slotsMovedSinceRefresh = 0

    public init(
        loop: EventLoop, seeds: [RedisConfiguration.HostPort], configuration: RedisConfiguration, scripts: [RedisScript],
        logger: GateLogger = .off
    ) {
        self.loop = loop
        self.seeds = seeds
        self.configuration = configuration
        var variants: [String: RedisScript] = [:]
        for script in scripts { variants[script.sha1] = Self.askedVariant(of: script) }
        askedVariants = variants
        // Both loaded at connect: a NOSCRIPT retry would lose the ASKING before it.
        self.scripts = scripts + scripts.compactMap { variants[$0.sha1] }
        self.logger = logger
        for seed in seeds { _ = node(seed) }
        refresh()
    }

    deinit {
        close()
    }

    /// Calls `script` on the master of `slotKey`'s slot (`slotKey` holds the hash tag).
    public func evaluate(
        _ script: RedisScript, slotKey: String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping RedisConnection.Completion
    ) {
        route(slot: ClusterSlot.of(slotKey), Redirections(), asking: nil, completion: completion) { [askedVariants] connection, asked, done in
            // After ASK the migrating node holds none of the call's keys (since Redis 7.0,
            // redis/redis#9526, it answers TRYAGAIN while it holds some; the gate needs 7.0
            // for SET NX GET anyway), and none can come back to it, so the importing
            // node alone holds those that exist: it serves a call naming one key even when
            // that key is missing, where it refuses one naming several with TRYAGAIN until
            // the migration ends. So the call names its first key and the variant reads
            // the others from ARGV, one key per command.
            if asked, let variant = askedVariants[script.sha1] {
                connection.evaluate(variant, { args in
                    build(&args)
                    args.nameFirstKeyOnly()
                }, completion: done)
            } else {
                connection.evaluate(script, build, completion: done)
            }
        }
    }

    /// Sends one command to the master of `slotKey`'s slot.
    public func send(
        slotKey: String, _ build: @escaping (inout RedisArguments) -> Void, completion: @escaping RedisConnection.Completion
    ) {
        route(slot: ClusterSlot.of(slotKey), Redirections(), asking: nil, completion: completion) { connection, _, done in
            connection.send(build, completion: done)
        }
    }

    public func close() {
        closed = true
        refreshTimer.cancel()
        // A retry waiting for its timer runs now and fails at once (the client is closed),
        // so its caller gets an answer rather than none.
        let pending = retries.values
        retries.removeAll()
        for (timer, retry) in pending {
            timer.cancel()
            retry()
        }
        for connection in nodes.values { connection.close() }
        nodes.removeAll()
        statistics.setReady(false)
    }

    // MARK: - Routing

    private func route(
        slot: Int, _ way: Redirections, asking: RedisConfiguration.HostPort?, completion: @escaping RedisConnection.Completion,
        _ issue: @escaping (RedisConnection, _ asked: Bool, @escaping RedisConnection.Completion) -> Void
    ) {
        guard !closed else { return completion(.failure(RedisError(.unavailable, "the cluster client was closed"))) }
        guard let target = asking ?? owners[slot] ?? (mapKnown ? nil : seeds.first) else {
            scheduleRefresh()
            return completion(.failure(RedisError(.unavailable, "no cluster node serves slot \(slot)")))
        }
        let connection = node(target)
        if asking != nil {
            // ASKING holds for the very next command on this connection: the two pipeline.
            connection.send({ $0.append("ASKING") }, completion: { _ in })
        }
        issue(connection, asking != nil) { [unowned self] result in
            guard case .failure(let error) = result else { return completion(result) }
            var way = way
            if case .server = error.kind {
                if let moved = Self.redirect(error.message, prefix: "MOVED "), way.hops < Self.maximumRetries {
                    self.statistics.recordRedirect(.moved)
                    if self.owners[slot] != moved { self.slotsMovedSinceRefresh += 1 }
                    self.owners[slot] = moved
                    self.scheduleRefresh()
                    way.hops += 1
                    return self.route(slot: slot, way, asking: nil, completion: completion, issue)
                }
                if let ask = Self.redirect(error.message, prefix: "ASK "), way.hops < Self.maximumRetries {
                    self.statistics.recordRedirect(.ask)
                    way.hops += 1
                    return self.route(slot: slot, way, asking: ask, completion: completion, issue)
                }
                if error.message.hasPrefix("TRYAGAIN") {
                    self.statistics.recordRedirect(.tryagain)
                    if self.tryAgain(&way) {
                        // A slot being migrated holds some of the command's keys on one node and
                        // some on the other (or not at all): ask the owner again once the
                        // migration had time to move more keys; it answers, redirects with ASK
                        // once none is left on it, or says TRYAGAIN again.
                        var next = way
                        next.wait = min(way.wait * 2, Self.longestTryAgainWait)
                        return self.retryLater(after: way.wait) {
                            self.route(slot: slot, next, asking: nil, completion: completion, issue)
                        }
                    }
                    self.statistics.recordError()
                    self.scheduleRefresh()
                    return completion(.failure(RedisError(.unavailable, error.message)))
                }
            }
            // A refusal of an evicting master is the gate's own, not a Redis error.
            if error.kind != .evicting { self.statistics.recordError() }
            switch error.kind {
            case .server:
                if error.message.hasPrefix("CLUSTERDOWN") {
                    self.scheduleRefresh()
                    return completion(.failure(RedisError(.unavailable, error.message)))
                }
            case .unavailable, .timeout:
                self.scheduleRefresh()
            case .protocolViolation, .evicting:
                break
            }
            completion(result)
        }
    }

    /// Whether a command that got `TRYAGAIN` may be sent again after `way.wait`: until the
    /// command timeout has passed since its first `TRYAGAIN` (a caller waits no longer
    /// than it would for one reply). MOVED and ASK hops count anew after each.
    private func tryAgain(_ way: inout Redirections) -> Bool {
        let now = ContinuousClock.now
        let deadline = way.deadline ?? now + configuration.commandTimeout
        way.deadline = deadline
        way.hops = 0
        guard now + way.wait < deadline else { return false }
        return true
    }

    private func retryLater(after delay: Duration, _ body: @escaping () -> Void) {
        retryCount &+= 1
        let number = retryCount
        let timer = EventTimer(loop: loop) { [unowned self] in
            self.retries.removeValue(forKey: number)?.retry()
        }
        retries[number] = (timer, body)
        timer.schedule(after: delay)
    }

    func node(_ address: RedisConfiguration.HostPort) -> RedisConnection {
        if let existing = nodes[address] { return existing }
        let connection = RedisConnection(
            loop: loop, configuration: configuration.with(endpoint: .tcp(host: address.host, port: address.port)),
            scripts: scripts, logger: logger)
        connection.onStateChange = { [unowned self] _ in self.updateReadiness() }
        connection.onEvictionChange = { [unowned self] in self.updateEviction() }
        nodes[address] = connection
        return connection
    }

    /// Ready when every slot has a master and every master's connection is ready. While
    /// not, the map is read again every half second: a failover may have finished that no
    /// request of this worker has run into yet.
    private func updateReadiness() {
        guard !closed else { return }
        let masters = Set(owners.compactMap { $0 })
        let ready = mapKnown && owners.allSatisfy { $0 != nil } && masters.allSatisfy { nodes[$0]?.state == .ready }
        statistics.setReady(ready)
        if !ready, !refreshing, !refreshTimer.isScheduled, !nodes.isEmpty { refreshTimer.schedule(after: .milliseconds(500)) }
    }

    // MARK: - The slot map

    /// Reads the map again soon (at most every 100 ms).
    private func scheduleRefresh() {
        guard !closed else { return }
        guard !refreshing else { refreshWanted = true; return }
        if !refreshTimer.isScheduled { refreshTimer.schedule(after: .milliseconds(100)) }
    }

    /// `CLUSTER SLOTS` on a node that answers: the known masters first, then the seeds.
    private func refresh() {
        guard !closed else { return }
        guard !refreshing else { refreshWanted = true; return }
        refreshing = true
        statistics.recordReconnect()
        // Once the map is known, the nodes it names: a seed that left the cluster is not
        // dialled again unless none of them answers.
        let candidates = Array(Set(owners.compactMap { $0 })) + knownReplicas + seeds + Array(nodes.keys)
        ask(candidates, at: 0)
    }

    private func ask(_ candidates: [RedisConfiguration.HostPort], at index: Int) {
        guard !closed else { return }
        guard index < candidates.count else {
            refreshing = false
            updateReadiness()
            refreshTimer.schedule(after: .milliseconds(250))  // nobody answered: try again soon
            return
        }
        node(candidates[index]).sendRegardless({ $0.append("CLUSTER", "SLOTS") }, completion: { [unowned self] result in
            guard case .success(let reply) = result, let map = Self.slotMap(reply, askedNode: candidates[index]) else {
                return self.ask(candidates, at: index + 1)
            }
            self.logRemap(from: self.owners, to: map, wasKnown: self.mapKnown)
            self.owners = map
            self.mapKnown = true
            self.refreshing = false
            let masters = Set(map.compactMap { $0 })
            self.knownReplicas = Self.replicas(reply, askedNode: candidates[index]).filter { !masters.contains($0) }
            for master in masters { _ = self.node(master) }
            // Forget nodes that are no longer masters (demoted or gone), seeds too: the map
            // names the nodes to ask from now on.
            for (address, connection) in self.nodes where !masters.contains(address) {
                connection.close()
                self.nodes[address] = nil
                if self.seeds.contains(address), !self.knownReplicas.contains(address), self.droppedSeeds.insert(address).inserted {
                    self.logger.info("redis cluster: seed \(address) is not in the cluster's map; no longer dialled")
                }
            }
            self.updateReadiness()
            self.updateEviction()
            // A slot without an owner (a failover under way) means: look again soon.
            if map.contains(where: { $0 == nil }) || self.refreshWanted {
                self.refreshWanted = false
                self.refreshTimer.schedule(after: .milliseconds(250))
            }
        })
    }
}
