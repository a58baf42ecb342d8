import Foundation
import Synchronization

/// One Redis master, its replica and three Sentinels watching it, for one test, all on free
/// loopback ports in one temp directory (`<tmp>/resendgate-sentinel-XXXXXX/<port>`).
///
/// ```swift
/// let set = try RedisSentinelSet()
/// defer { set.stop() }
/// // resendgate serve --redis-sentinel \(set.sentinelList) --sentinel-master \(set.masterName)
/// let old = set.killMaster()
/// let new = try set.waitForFailover()
/// ```
///
/// Sentinels are the same `redis-server` binary started with `--sentinel` (Debian's
/// `redis-sentinel` package adds only a service file and a config; it is not needed).
/// `init` returns once the replica's link is up and every Sentinel knows the replica and the
/// other Sentinels (they find each other through hello messages every 2 s, so startup takes
/// 2 to 4 s); before that a failover could not be authorised.
///
/// Settings: `sentinel monitor NAME 127.0.0.1 PORT 2` (quorum 2 of 3),
/// `down-after-milliseconds 1000` (a dead master is subjectively down after 1 s),
/// `failover-timeout 3000` (a failed election is retried after 6 s instead of 6 min),
/// `parallel-syncs 1`. Data nodes: `appendonly yes`, `appendfsync always`,
/// `repl-diskless-sync-delay 0`, `shutdown-timeout 0`. A failover typically completes 2 to 5 s
/// after the kill.
public final class RedisSentinelSet: Sendable {
    /// The temp folder holding every process's directory.
    public let directory: String
    /// The master (first) and the replica, as started.
    let dataNodes: [RedisProcess]
    let sentinelNodes: [RedisProcess]
    let currentMaster: Atomic<Int>
    private let stopped = Atomic(false)

    /// Starts the master, its replica and the Sentinels and waits until they all know each other.
    public init() throws {
        let (executable, major) = try RedisNodes.server.get()
        let directory = try TemporaryDirectory.make(prefix: "resendgate-sentinel-")
        let started = ContinuousClock.now
        var data: [RedisProcess] = []
        var sentinels: [RedisProcess] = []
        var used = Set<Int>()
        func launch(extraArguments: [String] = [], configuration: (_ port: Int, _ directory: String) -> String) throws -> RedisProcess {
            let (process, _) = try RedisProcess.start(
                executable: executable, root: directory, extraArguments: extraArguments, excluding: used,
                configuration: { ports, processDirectory in configuration(ports[0], processDirectory) })
            used.insert(process.port)
            return process
        }
        do {
            let master = try launch { port, directory in
                Self.dataConfiguration(port: port, directory: directory, major: major, replicaOf: nil)
            }
            data.append(master)
            let replica = try launch { port, directory in
                Self.dataConfiguration(port: port, directory: directory, major: major, replicaOf: master.port)
            }
            data.append(replica)
            // Sentinels start only once the replica is attached, so their first INFO of the
            // master already lists it.
            _ = try RedisNodes.waitUntil("replica linking to master \(master.port)", timeout: .seconds(10)) { () -> (Bool?, String) in
                let link = try RedisNodes.info(replica.client(timeout: .seconds(1)), "replication")["master_link_status"]
                return link == "up" ? (true, "") : (nil, "\(replica.port): master_link_status \(link ?? "?")")
            }
            for _ in 0..<3 {
                sentinels.append(try launch(extraArguments: ["--sentinel"]) { port, directory in
                    Self.sentinelConfiguration(port: port, directory: directory, masterPort: master.port)
                })
            }
        } catch {
            RedisProcess.terminateAll(sentinels + data)
            TemporaryDirectory.remove(directory)
            throw error
        }
        self.directory = directory
        self.dataNodes = data
        self.sentinelNodes = sentinels
        self.currentMaster = Atomic(data[0].port)
        do {
            try waitUntilSentinelsAgree(timeout: max(.seconds(20) - (ContinuousClock.now - started), .seconds(1)))
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
    }

    // MARK: Addresses

    /// The name the Sentinels know the master by (`--sentinel-master`).
    public var masterName: String { Self.masterName }
    static let masterName = "resendgate"

    /// Every Sentinel as `127.0.0.1:PORT`.
    public var sentinels: [String] { sentinelNodes.map { "127.0.0.1:\($0.port)" } }

    /// `127.0.0.1:S1,127.0.0.1:S2,...`, as `--redis-sentinel` takes it.
    public var sentinelList: String { sentinels.joined(separator: ",") }

    /// The master's port: the first one until `waitForFailover()` returns a new one.
    public var masterPort: Int { currentMaster.load(ordering: .relaxed) }

    /// The ports of the data nodes that started as replicas.
    public var replicaPorts: [Int] { dataNodes.dropFirst().map(\.port) }

    /// A new client on the data node or Sentinel at `port`.
    public func client(port: Int, timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try RedisTestClient(port: port, timeout: timeout)
    }

    /// A new client on the current master.
    public func masterClient(timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try client(port: masterPort, timeout: timeout)
    }

    /// What each running Sentinel answers to `SENTINEL GET-MASTER-ADDR-BY-NAME`, by Sentinel port.
    public func sentinelsMasterPorts() -> [Int: Int] {
        var answers: [Int: Int] = [:]
        for sentinel in sentinelNodes where sentinel.isRunning {
            let reply = try? sentinel.client(timeout: .seconds(1)).command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName)
            if let port = reply?.array?.last?.string.flatMap(Int.init) { answers[sentinel.port] = port }
        }
        return answers
    }

    // MARK: Lifecycle

    /// Stops every process (SIGTERM to all at once, Sentinels first) and removes the directory. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        // Sentinels first: else they could start a failover while the data nodes go down.
        RedisProcess.terminateAll(sentinelNodes)
        RedisProcess.terminateAll(dataNodes)
        TemporaryDirectory.remove(directory)
    }

    // MARK: Helpers

    func node(_ port: Int) -> RedisProcess? {
        (dataNodes + sentinelNodes).first { $0.port == port }
    }

    /// A data node's: append-only, and a replica of `master` unless nil.
    static func dataConfiguration(port: Int, directory: String, major: Int, replicaOf master: Int?) -> String {
        var extra = ["repl-diskless-sync-delay 0"]
        if major >= 7 { extra.append("shutdown-timeout 0") }
        if let master { extra.append("replicaof 127.0.0.1 \(master)") }
        return RedisServer.Options(appendOnly: true, appendFsync: .always, extraConfiguration: extra)
            .configuration(port: port, directory: directory, redisMajorVersion: major)
    }

    static func sentinelConfiguration(port: Int, directory: String, masterPort: Int) -> String {
        [
            "# Sentinel (ResendGateTestSupport.RedisSentinelSet); Sentinel rewrites this file",
            "bind 127.0.0.1",
            "port \(port)",
            "daemonize no",
            "dir \"\(directory)\"",
            "logfile \"\(directory)/redis.log\"",
            "pidfile \"\(directory)/redis.pid\"",
            "sentinel monitor \(masterName) 127.0.0.1 \(masterPort) 2",
            "sentinel down-after-milliseconds \(masterName) 1000",
            "sentinel failover-timeout \(masterName) 3000",
            "sentinel parallel-syncs \(masterName) 1",
        ].joined(separator: "\n") + "\n"
    }
}
