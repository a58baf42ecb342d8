import Foundation
import RedisClient
import Synchronization

/// A real Redis Cluster for one test: 3 masters with a replica each, every node a
/// `redis-server` on its own free loopback port, all in one temp directory
/// (`<tmp>/resendgate-cluster-XXXXXX/<port>`).
///
/// ```swift
/// let cluster = try RedisCluster()
/// defer { cluster.stop() }
/// let owner = try cluster.masterPort(forSlot: RedisCluster.slot(forKey: "rg:{login:+8613800138000}:cooldown"))
/// cluster.kill(port: owner)
/// let promoted = try cluster.waitForFailover(of: owner)
/// ```
///
/// `init` returns once `redis-cli --cluster create` has run, every node reports
/// `cluster_state:ok` with all 16 384 slots served, every node knows every other, and every
/// replica's link to its master is up (so `WAIT 1` works at once).
///
/// Node settings, and why:
/// - `cluster-node-timeout 1000` (ms): a dead master is flagged PFAIL after 1 s, FAIL once a
///   majority of masters agree, and its replica is elected about 1 s later, so a failover
///   takes 2 to 3 s instead of the 15+ s of the default 15 000.
/// - `cluster-replica-validity-factor 0`: a replica may always stand for election, however long
///   its link to the master was down. With the default factor 10 and a 1 s node timeout, a
///   replica whose link was down for ~10 s (a paused or slow test machine) would refuse to
///   promote itself and the cluster would stay down for good.
/// - `cluster-allow-replica-migration no`: replicas stay with the master they were given, so
///   `replicas()` and a test's idea of "the replica of X" do not change behind its back.
/// - `cluster-require-full-coverage yes` (Redis's default): while a master is down and not yet
///   replaced, the whole cluster answers `CLUSTERDOWN`, as in production.
/// - `appendonly yes`, `appendfsync always`: a killed node that is started again forgets
///   nothing it acknowledged.
/// - `repl-diskless-sync-delay 0`: replicas sync at once (the default waits 5 s for more
///   replicas to join the same transfer).
/// - `cluster-port`: the bus port is chosen free like the client port (the default
///   port + 10 000 may be taken, or above 65 535 for a high ephemeral port).
/// - `shutdown-timeout 0`: `stop()` does not wait for lagging replicas.
///
/// Redis 7 or later (`cluster-port`, `shutdown-timeout`). The calls block the calling thread.
public final class RedisCluster: Sendable {
    /// Masters, each owning an even share of the 16 384 slots (3: Redis's minimum).
    static let masters = 3
    /// Replicas of each master.
    static let replicasPerMaster = 1
    /// How long the whole cluster may take to come up.
    static let startupTimeout: Duration = .seconds(30)

    /// One node as `CLUSTER NODES` describes it.
    public struct Node: Sendable, Hashable, CustomStringConvertible {
        /// Its client port on 127.0.0.1.
        public var port: Int
        /// Its 40-character cluster node id.
        public var nodeID: String
        /// The id of its master when it is a replica.
        public var masterNodeID: String?
        /// The flags (`master`, `slave`, `myself`, `fail?`, `fail`, ...).
        public var flags: Set<String>
        /// The slots it owns (masters only), as ranges.
        public var slots: [ClosedRange<Int>]

        /// Whether it is a master (`master` flag).
        public var isMaster: Bool { flags.contains("master") }
        /// Whether some node suspects or has agreed it is down (`fail?` or `fail`).
        public var isFailing: Bool { flags.contains("fail") || flags.contains("fail?") }
        /// Whether it owns `slot`.
        public func owns(_ slot: Int) -> Bool { slots.contains { $0.contains(slot) } }

        public var description: String {
            "\(port) \(nodeID.prefix(8)) \(flags.sorted().joined(separator: ","))"
                + (masterNodeID.map { " of \($0.prefix(8))" } ?? "")
                + (slots.isEmpty ? "" : " " + slots.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: " "))
        }
    }

    /// What `migrateSlot` just did, for `onStep`.
    public enum MigrationStep: Sendable, Equatable {
        /// `CLUSTER SETSLOT slot IMPORTING source` on the target.
        case importing
        /// `CLUSTER SETSLOT slot MIGRATING target` on the source.
        case migrating
        /// One `MIGRATE ... KEYS` batch moved these keys.
        case moved([String])
        /// `CLUSTER SETSLOT slot NODE target` sent to every master: the slot is the target's.
        case assigned
    }

    /// The temp folder holding every node's directory.
    public let directory: String
    let nodes: [RedisProcess]
    /// How each killed master looked just before the kill (for `waitForFailover`).
    let killed = Mutex<[Int: Node]>([:])
    private let stopped = Atomic(false)

    /// Starts the nodes, creates the cluster and waits until it is fully up.
    /// Throws `TestSupportError.executableNotFound`, `.didNotStart` or `.timeout` (with what it saw).
    public init() throws {
        let (executable, major) = try RedisNodes.server.get()
        guard major >= 7 else {
            throw TestSupportError.didNotStart.with("RedisCluster needs Redis 7 or later (cluster-port); \(executable) is v\(major)")
        }
        let cli = try RedisNodes.locateCLI(nextTo: executable)
        let directory = try TemporaryDirectory.make(prefix: "resendgate-cluster-")
        let started = ContinuousClock.now
        var nodes: [RedisProcess] = []
        do {
            var used = Set<Int>()
            for _ in 0..<(Self.masters * (1 + Self.replicasPerMaster)) {
                let (node, ports) = try RedisProcess.start(
                    executable: executable, root: directory, extraPorts: 1, excluding: used,
                    configuration: { ports, nodeDirectory in
                        Self.configuration(port: ports[0], busPort: ports[1], directory: nodeDirectory, major: major)
                    })
                used.formUnion(ports)
                nodes.append(node)
            }
            let create = try CommandRunner.run(
                cli, ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                    + ["--cluster-replicas", "\(Self.replicasPerMaster)", "--cluster-yes"],
                timeout: Self.startupTimeout)
            guard create.exitCode == 0, !create.timedOut else {
                throw TestSupportError.didNotStart.with("redis-cli --cluster create failed: \(create)")
            }
        } catch {
            RedisProcess.terminateAll(nodes)
            TemporaryDirectory.remove(directory)
            throw error
        }
        self.directory = directory
        self.nodes = nodes
        do {
            let remaining = Self.startupTimeout - (ContinuousClock.now - started)
            try waitUntilHealthy(timeout: max(remaining, .seconds(1)))
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
    }

    // MARK: Addresses

    /// Every node as `127.0.0.1:PORT`, in start order (masters and replicas alike: any is a seed).
    public var seeds: [String] { nodes.map { "127.0.0.1:\($0.port)" } }

    /// `127.0.0.1:P1,127.0.0.1:P2,...`, as `--redis-cluster` takes it.
    public var seedList: String { seeds.joined(separator: ",") }

    /// Every node's port, in start order.
    public var ports: [Int] { nodes.map(\.port) }

    /// Whether the node on `port` runs (it was not killed, or was restarted).
    public func isRunning(port: Int) -> Bool { node(port)?.isRunning ?? false }

    /// A new client on the node at `port`.
    public func client(port: Int, timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try RedisTestClient(port: port, timeout: timeout)
    }

    /// A new client on the master that owns `key`'s slot right now.
    public func client(forKey key: String, timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try client(port: masterPort(forSlot: Self.slot(forKey: key)), timeout: timeout)
    }

    // MARK: Lifecycle

    /// Stops every node (SIGTERM to all at once, SIGKILL after 5 s) and removes the directory. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        RedisProcess.terminateAll(nodes)
        TemporaryDirectory.remove(directory)
    }

    // MARK: Helpers

    func node(_ port: Int) -> RedisProcess? {
        nodes.first { $0.port == port }
    }

    static func configuration(port: Int, busPort: Int, directory: String, major: Int) -> String {
        let base = RedisServer.Options(
            appendOnly: true, appendFsync: .always,
            extraConfiguration: [
                "# Redis Cluster node (ResendGateTestSupport.RedisCluster)",
                "cluster-enabled yes",
                "cluster-config-file nodes.conf",
                "cluster-port \(busPort)",
                "cluster-node-timeout 1000",
                "cluster-replica-validity-factor 0",
                "cluster-allow-replica-migration no",
                "cluster-require-full-coverage yes",
                "repl-diskless-sync-delay 0",
                "shutdown-timeout 0",
            ])
        return base.configuration(port: port, directory: directory, redisMajorVersion: major)
    }

    /// Parses `CLUSTER NODES`: `<id> <ip:port@cport[,hostname]> <flags> <master|-> <ping> <pong>
    /// <epoch> <link> <slot> <slot>...`; importing/migrating entries (`[...]`) are skipped.
    static func clusterNodes(_ client: RedisTestClient) throws -> [Node] {
        let reply = try client.command("CLUSTER", "NODES")
        guard let text = reply.string else {
            throw TestSupportError.protocolViolation.with("CLUSTER NODES at \(client.endpoint) answered \(reply)")
        }
        return try text.split(whereSeparator: \.isNewline).map { line in
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 8,
                let portText = fields[1].split(separator: "@").first?.split(separator: ":").last,
                let port = Int(portText)
            else {
                throw TestSupportError.protocolViolation.with("CLUSTER NODES line not understood: \(line)")
            }
            // `5461` or `0-5460`.
            let slots = fields.dropFirst(8).filter { !$0.hasPrefix("[") }.compactMap { entry -> ClosedRange<Int>? in
                let bounds = entry.split(separator: "-").compactMap { Int($0) }
                return (1...2).contains(bounds.count) ? bounds[0]...bounds[bounds.count - 1] : nil
            }
            return Node(
                port: port, nodeID: fields[0], masterNodeID: fields[3] == "-" ? nil : fields[3],
                flags: Set(fields[2].split(separator: ",").map(String.init)), slots: slots)
        }
    }

    static func expectOK(_ reply: RESPValue, _ what: String) throws {
        guard reply == .simpleString("OK") else { throw TestSupportError.processFailed.with("\(what): \(reply)") }
    }

    static func expectString(_ reply: RESPValue, _ what: String) throws -> String {
        guard let text = reply.string else { throw TestSupportError.protocolViolation.with("\(what): \(reply)") }
        return text
    }
}
