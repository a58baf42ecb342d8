/// Crashes, restarts and slot moves of a running cluster.
extension RedisCluster {
    /// Kills the node on `port` with SIGKILL, as a crash would, and waits until it is gone.
    /// Its directory stays, so `restart(port:)` brings it back with its AOF and nodes.conf.
    public func kill(port: Int) {
        guard let node = node(port) else { return }
        if let before = try? topology().first(where: { $0.port == port }), before.isMaster {
            killed.withLock { $0[port] = before }
        }
        node.kill()
    }

    /// Waits until a replica of the (killed) master on `port` has taken over its slots, every
    /// running node agrees, and every running node reports `cluster_state:ok`.
    /// Returns the new master's port.
    @discardableResult
    public func waitForFailover(of port: Int, timeout: Duration = .seconds(15)) throws -> Int {
        // As it looked before the kill, else as it looks now.
        let seen = try killed.withLock({ $0[port] }) ?? topology().first { $0.port == port }
        guard let old = seen, old.isMaster, !old.slots.isEmpty else {
            throw TestSupportError.invalidState.with("the node on port \(port) was not a master with slots")
        }
        let slot = old.slots[0].lowerBound
        return try RedisNodes.waitUntil("failover of master \(port) (slot \(slot))", timeout: timeout) {
            var owners = Set<Int>()
            for node in nodes where node.isRunning {
                let client = try node.client(timeout: .seconds(1))
                let info = RedisNodes.fields(try client.command("CLUSTER", "INFO").string ?? "")
                guard info["cluster_state"] == "ok" else {
                    return (nil, "\(node.port): cluster_state \(info["cluster_state"] ?? "?")")
                }
                let view = try Self.clusterNodes(client)
                guard let owner = view.first(where: { $0.isMaster && $0.owns(slot) }) else {
                    return (nil, "\(node.port): nobody owns slot \(slot)")
                }
                owners.insert(owner.port)
            }
            guard owners.count == 1, let owner = owners.first, owner != port, isRunning(port: owner) else {
                return (nil, "owners of slot \(slot): \(owners.sorted())")
            }
            let role = try RedisNodes.info(try client(port: owner, timeout: .seconds(1)), "replication")["role"]
            return role == "master" ? (owner, "") : (nil, "\(owner) has role \(role ?? "?")")
        }
    }

    /// Starts the node on `port` again (same directory, AOF and nodes.conf) and waits until
    /// every running node reports `cluster_state:ok` and none flags it as failing. A former
    /// master whose slots went to its replica comes back as that replica's replica.
    public func restart(port: Int, timeout: Duration = .seconds(15)) throws {
        guard let node = node(port) else { throw TestSupportError.invalidState.with("no node on port \(port)") }
        try node.launch()
        killed.withLock { _ = $0.removeValue(forKey: port) }
        _ = try RedisNodes.waitUntil("node \(port) rejoining", timeout: timeout) { () -> (Bool?, String) in
            for running in nodes where running.isRunning {
                let client = try running.client(timeout: .seconds(1))
                let info = RedisNodes.fields(try client.command("CLUSTER", "INFO").string ?? "")
                guard info["cluster_state"] == "ok" else { return (nil, "\(running.port): \(info["cluster_state"] ?? "?")") }
                let seen = try Self.clusterNodes(client).first { $0.port == port }
                guard let seen, !seen.isFailing else { return (nil, "\(running.port) sees \(port) as \(seen?.description ?? "unknown")") }
            }
            return (true, "")
        }
    }

    /// Waits until every running node reports `cluster_state:ok` with every slot served, knows
    /// every node, flags none as failing, and every running replica's link to its master is up.
    public func waitUntilHealthy(timeout: Duration = .seconds(15)) throws {
        let total = nodes.count
        _ = try RedisNodes.waitUntil("cluster of \(total) nodes becoming healthy", timeout: timeout) { () -> (Bool?, String) in
            for node in nodes where node.isRunning {
                let client = try node.client(timeout: .seconds(1))
                let info = RedisNodes.fields(try client.command("CLUSTER", "INFO").string ?? "")
                guard info["cluster_state"] == "ok", info["cluster_slots_ok"] == "16384",
                    info["cluster_known_nodes"] == "\(total)"
                else {
                    return (nil, "\(node.port): state \(info["cluster_state"] ?? "?"), slots ok "
                        + "\(info["cluster_slots_ok"] ?? "?"), known nodes \(info["cluster_known_nodes"] ?? "?")")
                }
                let view = try Self.clusterNodes(client)
                let running = view.filter { isRunning(port: $0.port) }
                if let failing = running.first(where: \.isFailing) ?? running.first(where: { $0.flags.contains("handshake") }) {
                    return (nil, "\(node.port) sees \(failing)")
                }
                let replicas = running.filter { !$0.isMaster }
                let expected = killed.withLock { $0.isEmpty } ? Self.masters * Self.replicasPerMaster : replicas.count
                guard running.filter({ $0.isMaster && !$0.slots.isEmpty }).count == Self.masters,
                    replicas.count == expected
                else { return (nil, "\(node.port) sees \(view)") }
                if view.first(where: { $0.flags.contains("myself") })?.isMaster == false {
                    let link = try RedisNodes.info(client, "replication")["master_link_status"]
                    guard link == "up" else { return (nil, "\(node.port): master_link_status \(link ?? "?")") }
                }
            }
            return (true, "")
        }
    }

    // MARK: Resharding

    /// Moves `slot` and its keys from the master on `source` to the master on `target` the way
    /// `redis-cli --cluster reshard` does: `CLUSTER SETSLOT slot IMPORTING` on the target,
    /// `MIGRATING` on the source, then `CLUSTER GETKEYSINSLOT` + `MIGRATE ... KEYS` in batches
    /// of `batchSize`, then `SETSLOT slot NODE target` on the target, the source and every
    /// other master. Between steps (and batches) it calls `onStep` and then sleeps `pause`,
    /// so a test can run load while the slot is half moved (clients then see `-ASK`).
    /// Waits until every running node sees the target as the owner. Returns the keys moved.
    @discardableResult
    public func migrateSlot(
        _ slot: Int, from source: Int, to target: Int, batchSize: Int = 100, pause: Duration = .zero,
        timeout: Duration = .seconds(15), onStep: ((MigrationStep) throws -> Void)? = nil
    ) throws -> Int {
        precondition(batchSize > 0)
        let sourceClient = try client(port: source)
        let targetClient = try client(port: target)
        let sourceID = try Self.expectString(sourceClient.command("CLUSTER", "MYID"), "CLUSTER MYID at \(source)")
        let targetID = try Self.expectString(targetClient.command("CLUSTER", "MYID"), "CLUSTER MYID at \(target)")
        let step: (MigrationStep) throws -> Void = { done in
            try onStep?(done)
            if pause > .zero { pauseBriefly(pause) }
        }

        try Self.expectOK(targetClient.command("CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", sourceID), "IMPORTING at \(target)")
        try step(.importing)
        try Self.expectOK(sourceClient.command("CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", targetID), "MIGRATING at \(source)")
        try step(.migrating)

        var moved = 0
        while true {
            let reply = try sourceClient.command("CLUSTER", "GETKEYSINSLOT", "\(slot)", "\(batchSize)")
            guard let keys = reply.array?.compactMap(\.string) else {
                throw TestSupportError.protocolViolation.with("CLUSTER GETKEYSINSLOT at \(source) answered \(reply)")
            }
            if keys.isEmpty { break }
            let migrate = try sourceClient.command(["MIGRATE", "127.0.0.1", "\(target)", "", "0", "5000", "KEYS"] + keys)
            guard migrate == .simpleString("OK") || migrate == .simpleString("NOKEY") else {
                throw TestSupportError.processFailed.with("MIGRATE of \(keys.count) keys from \(source) to \(target): \(migrate)")
            }
            moved += keys.count
            try step(.moved(keys))
        }

        // The target first (it stops answering ASK-only), then the source (it starts answering
        // MOVED), then everyone else, as the Redis manual's resharding steps say.
        let others = try masters().map(\.port).filter { $0 != source && $0 != target }
        for port in [target, source] + others {
            try Self.expectOK(
                client(port: port).command("CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID), "SETSLOT NODE at \(port)")
        }
        _ = try RedisNodes.waitUntil("every node seeing slot \(slot) on \(target)", timeout: timeout) { () -> (Bool?, String) in
            for node in nodes where node.isRunning {
                let owner = try Self.clusterNodes(node.client(timeout: .seconds(1))).first { $0.isMaster && $0.owns(slot) }
                guard owner?.port == target else { return (nil, "\(node.port) sees owner \(owner?.port ?? 0)") }
            }
            return (true, "")
        }
        try step(.assigned)
        return moved
    }
}
