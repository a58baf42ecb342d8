/// Crashes, stalls and failovers of a running master-replica set.
extension RedisSentinelSet {
    /// Kills the current master with SIGKILL and returns its port.
    @discardableResult
    public func killMaster() -> Int {
        let port = masterPort
        kill(port: port)
        return port
    }

    /// Kills the data node or Sentinel on `port` with SIGKILL.
    public func kill(port: Int) {
        node(port)?.kill()
    }

    /// Starts a killed process again on the same port and directory (a former master comes
    /// back, and the Sentinels turn it into a replica of the new one).
    public func restart(port: Int) throws {
        guard let node = node(port) else { throw TestSupportError.invalidState.with("no process on port \(port)") }
        try node.launch()
    }

    /// Waits until every running Sentinel names another running data node as the master and
    /// that node reports `role:master`; `masterPort` then returns it. Returns the new port.
    @discardableResult
    public func waitForFailover(timeout: Duration = .seconds(20)) throws -> Int {
        let old = masterPort
        let running = sentinelNodes.filter(\.isRunning).count
        let new = try RedisNodes.waitUntil("Sentinel failover away from \(old)", timeout: timeout) { () -> (Int?, String) in
            let answers = sentinelsMasterPorts()
            let ports = Set(answers.values)
            guard answers.count == running, ports.count == 1, let port = ports.first, port != old,
                node(port)?.isRunning == true
            else { return (nil, "sentinels answer \(answers)") }
            let role = try RedisNodes.info(client(port: port, timeout: .seconds(1)), "replication")["role"]
            return role == "master" ? (port, "") : (nil, "\(port) has role \(role ?? "?")")
        }
        currentMaster.store(new, ordering: .relaxed)
        return new
    }

    /// Waits until every running Sentinel names the same master, sees all its replicas and
    /// knows every other Sentinel.
    public func waitUntilSentinelsAgree(timeout: Duration = .seconds(15)) throws {
        let master = masterPort
        let others = sentinelNodes.count - 1
        _ = try RedisNodes.waitUntil("sentinels agreeing on master \(master)", timeout: timeout) { () -> (Bool?, String) in
            for sentinel in sentinelNodes where sentinel.isRunning {
                let reply = try sentinel.client(timeout: .seconds(1)).command("SENTINEL", "MASTER", masterName)
                guard let pairs = reply.array?.compactMap(\.string), pairs.count % 2 == 0 else {
                    return (nil, "\(sentinel.port): SENTINEL MASTER answered \(reply)")
                }
                let fields = Dictionary(
                    stride(from: 0, to: pairs.count, by: 2).map { (pairs[$0], pairs[$0 + 1]) }, uniquingKeysWith: { a, _ in a })
                guard fields["port"] == "\(master)", fields["flags"] == "master",
                    fields["num-slaves"] == "\(replicaPorts.count)", fields["num-other-sentinels"] == "\(others)"
                else {
                    return (nil, "\(sentinel.port): port \(fields["port"] ?? "?") flags \(fields["flags"] ?? "?") "
                        + "replicas \(fields["num-slaves"] ?? "?") other sentinels \(fields["num-other-sentinels"] ?? "?")")
                }
            }
            return (true, "")
        }
    }
}
