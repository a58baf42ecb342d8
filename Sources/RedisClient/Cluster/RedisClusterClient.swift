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
    private var nodes: [RedisConfiguration.HostPort: RedisConnection] = [:]
    private var owners = [RedisConfiguration.HostPort?](repeating: nil, count: ClusterSlot.count)
    private var mapKnown = false
    private var refreshing = false
    private var closed = false
    private var refreshWanted = false
    private lazy var refreshTimer = EventTimer(loop: loop) { [unowned self] in self.refresh() }
    /// Readiness, errors and map refreshes, readable from any thread.
    public let statistics = RedisStatistics()
    /// Redirections (MOVED, ASK) and TRYAGAIN retries (20 ms apart) at most for one
    /// command: a migration in progress can bounce a command a few times.
    static let maximumRetries = 25
    /// Pending TRYAGAIN retries: each timer, kept alive until it fires, and the retry.
    private var retries: [ObjectIdentifier: (timer: EventTimer, retry: () -> Void)] = [:]
    /// Slot re-maps go here, and each node connection's reconnects and script reloads.
    private let logger: GateLogger
    /// Slots that `MOVED` gave a new owner since the map was last read, for the log.
    private var slotsMovedSinceRefresh = 0

    public init(
        loop: EventLoop, seeds: [RedisConfiguration.HostPort], configuration: RedisConfiguration, scripts: [RedisScript],
        logger: GateLogger = .off
    ) {
        self.loop = loop
        self.seeds = seeds
        self.configuration = configuration
        self.scripts = scripts
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
        route(slot: ClusterSlot.of(slotKey), redirects: 0, asking: nil, completion: completion) { connection, done in
            connection.evaluate(script, build, completion: done)
        }
    }

    /// Sends one command to the master of `slotKey`'s slot.
    public func send(
        slotKey: String, _ build: @escaping (inout RedisArguments) -> Void, completion: @escaping RedisConnection.Completion
    ) {
        route(slot: ClusterSlot.of(slotKey), redirects: 0, asking: nil, completion: completion) { connection, done in
            connection.send(build, completion: done)
        }
    }

    /// `PING` on every master the map names: all must answer.
    public func pingMasters(_ completion: @escaping (Bool) -> Void) {
        let masters = Set(owners.compactMap { $0 })
        guard mapKnown, !masters.isEmpty else { return completion(false) }
        var left = masters.count
        var healthy = true
        for master in masters {
            node(master).sendRegardless({ $0.append("PING") }) { result in
                if case .success(.status("PONG")) = result {} else { healthy = false }
                left -= 1
                if left == 0 { completion(healthy) }
            }
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
        slot: Int, redirects: Int, asking: RedisConfiguration.HostPort?, completion: @escaping RedisConnection.Completion,
        _ issue: @escaping (RedisConnection, @escaping RedisConnection.Completion) -> Void
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
        issue(connection) { [unowned self] result in
            guard case .failure(let error) = result else { return completion(result) }
            self.statistics.recordError()
            switch error.kind {
            case .server:
                if let moved = Self.redirect(error.message, prefix: "MOVED "), redirects < Self.maximumRetries {
                    if self.owners[slot] != moved { self.slotsMovedSinceRefresh += 1 }
                    self.owners[slot] = moved
                    self.scheduleRefresh()
                    return self.route(slot: slot, redirects: redirects + 1, asking: nil, completion: completion, issue)
                }
                if let ask = Self.redirect(error.message, prefix: "ASK "), redirects < Self.maximumRetries {
                    return self.route(slot: slot, redirects: redirects + 1, asking: ask, completion: completion, issue)
                }
                if error.message.hasPrefix("TRYAGAIN"), redirects < Self.maximumRetries {
                    // A slot half migrated holds some of the keys here and some there:
                    // the migration moves the rest within milliseconds, so ask again.
                    return self.retryLater(after: .milliseconds(20)) {
                        self.route(slot: slot, redirects: redirects + 1, asking: asking, completion: completion, issue)
                    }
                }
                if error.message.hasPrefix("CLUSTERDOWN") || error.message.hasPrefix("TRYAGAIN") {
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

    private func retryLater(after delay: Duration, _ body: @escaping () -> Void) {
        var timer: EventTimer!
        timer = EventTimer(loop: loop) { [unowned self] in
            self.retries[ObjectIdentifier(timer)] = nil
            body()
        }
        retries[ObjectIdentifier(timer)] = (timer, body)
        timer.schedule(after: delay)
    }

    /// `MOVED 3999 127.0.0.1:6381` → 127.0.0.1:6381.
    static func redirect(_ message: String, prefix: String) -> RedisConfiguration.HostPort? {
        guard message.hasPrefix(prefix) else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3 else { return nil }
        return RedisConfiguration.HostPort(authority: parts[2])
    }

    private func node(_ address: RedisConfiguration.HostPort) -> RedisConnection {
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

    /// Whether any master may evict keys, and the first one refused, for `/readyz` and
    /// `/metrics`: each master's connection refuses its own commands
    /// (RedisConnection+Eviction.swift). Before the map is known, every node counts.
    private func updateEviction() {
        guard !closed else { return }
        let masters = mapKnown ? Set(owners.compactMap { $0 }) : Set(nodes.keys)
        let connections = masters.sorted { $0.description < $1.description }.compactMap { nodes[$0] }
        statistics.setEviction(
            evicts: connections.contains { $0.statistics.evictsKeys },
            refusal: connections.lazy.compactMap { $0.statistics.evictionRefusal }.first)
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
        let candidates = Array(Set(owners.compactMap { $0 })) + seeds + Array(nodes.keys)
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
            for master in masters { _ = self.node(master) }
            // Forget nodes that are no longer masters (demoted or gone), but keep the seeds.
            for (address, connection) in self.nodes where !masters.contains(address) && !self.seeds.contains(address) {
                connection.close()
                self.nodes[address] = nil
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

    /// `CLUSTER SLOTS`: [[start, end, [host, port, id], replicas...], ...] → owner per slot.
    /// An empty host means the node that answered (a node that never learned its own
    /// address, such as the only master of a cluster, names itself so).
    static func slotMap(_ reply: RedisReply, askedNode: RedisConfiguration.HostPort) -> [RedisConfiguration.HostPort?]? {
        guard case .array(let ranges) = reply, !ranges.isEmpty else { return nil }
        var owners = [RedisConfiguration.HostPort?](repeating: nil, count: ClusterSlot.count)
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3,
                  let start = fields[0].integer, let end = fields[1].integer,
                  case .array(let master) = fields[2], master.count >= 2,
                  let host = master[0].string, let port = master[1].integer,
                  start >= 0, end < ClusterSlot.count, start <= end else { return nil }
            let address = RedisConfiguration.HostPort(host: host.isEmpty ? askedNode.host : host, port: port)
            for slot in start...end { owners[slot] = address }
        }
        return owners
    }

    /// A map read that moved slots (counting those `MOVED` moved since the last read)
    /// or changed the set of masters is info; the first map, and a map unchanged, debug.
    private func logRemap(from old: [RedisConfiguration.HostPort?], to new: [RedisConfiguration.HostPort?], wasKnown: Bool) {
        guard logger.isEnabled(.info) else {
            slotsMovedSinceRefresh = 0
            return
        }
        let changed = zip(old, new).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) } + slotsMovedSinceRefresh
        slotsMovedSinceRefresh = 0
        let masters = Set(new.compactMap { $0 })
        let names = masters.map(\.description).sorted().joined(separator: ", ")
        let unowned = new.reduce(0) { $0 + ($1 == nil ? 1 : 0) }
        let line = "redis cluster: slot map read, \(changed) slot\(changed == 1 ? "" : "s") changed owner"
            + (unowned > 0 ? ", \(unowned) without a master" : "") + "; masters \(names)"
        if wasKnown && (changed > 0 || masters != Set(old.compactMap { $0 })) { logger.info(line) } else { logger.debug(line) }
    }
}
