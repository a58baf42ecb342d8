import RedisClient

/// What a running cluster looks like: its nodes, their roles and the slots they own.
extension RedisCluster {
    /// Every node as one running node sees it (`CLUSTER NODES`).
    public func topology() throws -> [Node] {
        var lastError: Error = TestSupportError.invalidState.with("no node of the cluster runs")
        for node in nodes where node.isRunning {
            do {
                return try Self.clusterNodes(try node.client(timeout: .seconds(2)))
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The running masters that own slots, as (port, nodeID) and more, in port order.
    public func masters() throws -> [Node] {
        try topology().filter { $0.isMaster && !$0.isFailing && !$0.slots.isEmpty && isRunning(port: $0.port) }
            .sorted { $0.port < $1.port }
    }

    /// The running replicas, in port order; `masterNodeID` names each one's master.
    public func replicas() throws -> [Node] {
        try topology().filter { !$0.isMaster && !$0.isFailing && isRunning(port: $0.port) }.sorted { $0.port < $1.port }
    }

    /// The running replicas of the master on `port`.
    public func replicas(ofMaster port: Int) throws -> [Node] {
        let view = try topology()
        guard let master = view.first(where: { $0.port == port }) else {
            throw TestSupportError.invalidState.with("no node on port \(port) in \(view)")
        }
        return view.filter { $0.masterNodeID == master.nodeID && !$0.isFailing && isRunning(port: $0.port) }
    }

    /// The port of the master that owns `slot` right now.
    public func masterPort(forSlot slot: Int) throws -> Int {
        let view = try topology()
        guard let owner = view.first(where: { $0.isMaster && $0.owns(slot) }) else {
            throw TestSupportError.invalidState.with("no master owns slot \(slot): \(view)")
        }
        return owner.port
    }

    // MARK: Hash slots

    /// The cluster slot of `key`: the gate's own `ClusterSlot` (tests compare it with
    /// `CLUSTER KEYSLOT` on a live node).
    public static func slot(forKey key: String) -> Int {
        ClusterSlot.of(key)
    }

    /// The cluster slot of `key` (the same as `RedisCluster.slot(forKey:)`).
    public func slot(forKey key: String) -> Int { Self.slot(forKey: key) }

    /// A short hash tag (without braces) whose keys fall into `slot`: `"{\(tag)}:anything"`.
    public static func hashTag(forSlot slot: Int) -> String {
        precondition((0..<16_384).contains(slot))
        var index = 0
        while true {
            let tag = "t\(index)"
            if Self.slot(forKey: tag) == slot { return tag }
            index += 1
        }
    }
}
