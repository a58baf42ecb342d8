/// What a cluster client knows of its masters as a whole: whether every one answers
/// (readiness), and whether any may evict keys (`/readyz`, `/metrics`).
extension RedisClusterClient {
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

    /// Whether any master may evict keys, and the first one refused, for `/readyz` and
    /// `/metrics`: each master's connection refuses its own commands
    /// (RedisConnection+Eviction.swift). Before the map is known, every node counts.
    func updateEviction() {
        guard !closed else { return }
        let masters = mapKnown ? Set(owners.compactMap { $0 }) : Set(nodes.keys)
        let connections = masters.sorted { $0.description < $1.description }.compactMap { nodes[$0] }
        statistics.setEviction(
            evicts: connections.contains { $0.statistics.evictsKeys },
            refusal: connections.lazy.compactMap { $0.statistics.evictionRefusal }.first)
    }
}
