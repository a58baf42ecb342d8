import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One Redis master, its replica(s) and three Sentinels watching it, for one test, all on free
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
    /// How to start the set.
    public struct Options: Sendable {
        /// The name the Sentinels monitor the master under (`--sentinel-master`).
        public var masterName: String
        /// Replicas of the master.
        public var replicas: Int
        /// Sentinels (an odd number; the quorum is a majority of them).
        public var sentinels: Int
        /// `sentinel down-after-milliseconds`.
        public var downAfter: Duration
        /// `sentinel failover-timeout`.
        public var failoverTimeout: Duration
        /// `appendfsync` on the master and replicas.
        public var appendFsync: RedisServer.Options.AppendFsync
        /// Path of `redis-server`; nil searches like `RedisServer` does.
        public var executable: String?
        /// How long the whole set may take to come up.
        public var startupTimeout: Duration

        public init(
            masterName: String = "resendgate", replicas: Int = 1, sentinels: Int = 3,
            downAfter: Duration = .milliseconds(1000), failoverTimeout: Duration = .milliseconds(3000),
            appendFsync: RedisServer.Options.AppendFsync = .always, executable: String? = nil,
            startupTimeout: Duration = .seconds(20)
        ) {
            self.masterName = masterName
            self.replicas = replicas
            self.sentinels = sentinels
            self.downAfter = downAfter
            self.failoverTimeout = failoverTimeout
            self.appendFsync = appendFsync
            self.executable = executable
            self.startupTimeout = startupTimeout
        }
    }

    struct State: Sendable {
        var masterPort: Int
        var stopped = false
    }

    /// The temp folder holding every process's directory.
    public let directory: String
    /// The options it was started with.
    public let options: Options
    /// The name the Sentinels know the master by.
    public var masterName: String { options.masterName }
    /// The ports of the data nodes that started as replicas.
    public let replicaPorts: [Int]
    /// The Sentinels' ports.
    public let sentinelPorts: [Int]
    let dataNodes: [RedisNodeProcess]
    let sentinelNodes: [RedisNodeProcess]
    let state: Mutex<State>

    /// Starts the master, its replicas and the Sentinels and waits until they all know each other.
    public init(_ options: Options = Options()) throws {
        precondition(options.replicas >= 1, "a failover needs a replica")
        precondition(options.sentinels >= 1)
        let executable = try RedisServer.locateExecutable(options.executable)
        let major = RedisServer.majorVersion(of: executable)
        let directory = try TemporaryDirectory.make(prefix: "resendgate-sentinel-")
        let started = ContinuousClock.now
        var data: [RedisNodeProcess] = []
        var sentinels: [RedisNodeProcess] = []
        var used = Set<Int>()
        func launchData(replicaOf master: Int?) throws -> RedisNodeProcess {
            let (node, _) = try RedisNodeProcess.start(
                executable: executable, root: directory, startupTimeout: .seconds(10),
                choosePorts: { (try RedisNodes.freePorts(1, excluding: used)[0], []) },
                configuration: { port, _, nodeDirectory in
                    var extra = ["repl-diskless-sync-delay 0"]
                    if major >= 7 { extra.append("shutdown-timeout 0") }
                    if let master { extra.append("replicaof 127.0.0.1 \(master)") }
                    return RedisServer.Options(appendOnly: true, appendFsync: options.appendFsync, extraConfiguration: extra)
                        .configuration(port: port, directory: nodeDirectory, unixSocketPath: nil, redisMajorVersion: major)
                })
            used.insert(node.port)
            return node
        }
        do {
            let master = try launchData(replicaOf: nil)
            data.append(master)
            for _ in 0..<options.replicas { data.append(try launchData(replicaOf: master.port)) }
            // Sentinels start only once the replicas are attached, so their first INFO of the
            // master already lists them.
            let replicas = Array(data.dropFirst())
            _ = try RedisNodes.waitUntil("replicas linking to master \(master.port)", timeout: .seconds(10)) { () -> (Bool?, String) in
                for replica in replicas {
                    let link = try RedisNodes.info(replica.client(timeout: .seconds(1)), "replication")["master_link_status"]
                    guard link == "up" else { return (nil, "\(replica.port): master_link_status \(link ?? "?")") }
                }
                return (true, "")
            }
            for _ in 0..<options.sentinels {
                let (node, _) = try RedisNodeProcess.start(
                    executable: executable, root: directory, extraArguments: ["--sentinel"], startupTimeout: .seconds(10),
                    choosePorts: { (try RedisNodes.freePorts(1, excluding: used)[0], []) },
                    configuration: { port, _, nodeDirectory in
                        Self.sentinelConfiguration(port: port, directory: nodeDirectory, masterPort: master.port, options: options)
                    })
                used.insert(node.port)
                sentinels.append(node)
            }
        } catch {
            (sentinels + data).forEach { $0.beginTermination() }
            (sentinels + data).forEach { $0.terminate() }
            TemporaryDirectory.remove(directory)
            throw error
        }
        self.directory = directory
        self.options = options
        self.dataNodes = data
        self.sentinelNodes = sentinels
        self.replicaPorts = data.dropFirst().map(\.port)
        self.sentinelPorts = sentinels.map(\.port)
        self.state = Mutex(State(masterPort: data[0].port))
        do {
            try waitUntilSentinelsAgree(timeout: max(options.startupTimeout - (ContinuousClock.now - started), .seconds(1)))
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
    }

    // MARK: Addresses

    /// Every Sentinel as `127.0.0.1:PORT`.
    public var sentinels: [String] { sentinelPorts.map { "127.0.0.1:\($0)" } }

    /// `127.0.0.1:S1,127.0.0.1:S2,...`, as `--redis-sentinel` takes it.
    public var sentinelList: String { sentinels.joined(separator: ",") }

    /// The master's port: the first one until `waitForFailover()` returns a new one.
    public var masterPort: Int { state.withLock { $0.masterPort } }

    /// Every data node's port (master first, then the replicas as started).
    public var dataPorts: [Int] { dataNodes.map(\.port) }

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

    /// The last lines of the log of the process on `port`.
    public func logTail(port: Int, lines: Int = 20) -> String {
        node(port)?.logTail(lines: lines) ?? "(no process on port \(port))"
    }

    // MARK: Lifecycle

    /// Stops every process (SIGTERM to all at once, Sentinels first) and removes the directory. Idempotent.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        // Sentinels first: else they could start a failover while the data nodes go down.
        sentinelNodes.forEach { $0.beginTermination() }
        sentinelNodes.forEach { $0.terminate() }
        dataNodes.forEach { $0.beginTermination() }
        dataNodes.forEach { $0.terminate() }
        TemporaryDirectory.remove(directory)
    }

    // MARK: Helpers

    func node(_ port: Int) -> RedisNodeProcess? {
        (dataNodes + sentinelNodes).first { $0.port == port }
    }

    static func sentinelConfiguration(port: Int, directory: String, masterPort: Int, options: Options) -> String {
        let name = options.masterName
        let quorum = options.sentinels / 2 + 1
        return [
            "# Sentinel (ResendGateTestSupport.RedisSentinelSet); Sentinel rewrites this file",
            "bind 127.0.0.1",
            "port \(port)",
            "daemonize no",
            "dir \"\(directory)\"",
            "logfile \"\(directory)/redis.log\"",
            "pidfile \"\(directory)/redis.pid\"",
            "sentinel monitor \(name) 127.0.0.1 \(masterPort) \(quorum)",
            "sentinel down-after-milliseconds \(name) \(milliseconds(options.downAfter))",
            "sentinel failover-timeout \(name) \(milliseconds(options.failoverTimeout))",
            "sentinel parallel-syncs \(name) 1",
        ].joined(separator: "\n") + "\n"
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
