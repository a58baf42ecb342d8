import Foundation
import Synchronization

/// One `redis-server` process of a test setup (`RedisServer`, `RedisCluster`,
/// `RedisSentinelSet`): a port, a directory `<root>/<port>` inside the setup's temp folder,
/// and the config file the setup writes there. It does not own its directory (the setup
/// removes its whole root at once), and it can be paused, killed and started again on the
/// same port, directory and config.
final class RedisProcess: Sendable {
    let port: Int
    let directory: String
    /// `redis-server` arguments after the config file (`--sentinel` for a sentinel).
    private let extraArguments: [String]
    /// The `requirepass` of the config, sent with `AUTH` by `client()`.
    private let password: String?
    private let executable: String
    private let child = Mutex<ChildProcess?>(nil)

    /// How long a process may take to answer `PING`.
    static let startupTimeout: Duration = .seconds(10)

    /// Starts a process in `<root>/<port>` and waits for `PING`. Its port and `extraPorts`
    /// more are free loopback ports, none in `excluding` (chosen again when one turns out to
    /// be taken between probe and bind); `configuration` receives them all, the process's
    /// first, and the directory, and returns the whole redis.conf.
    static func start(
        executable: String, root: String, extraArguments: [String] = [], password: String? = nil, extraPorts: Int = 0,
        excluding: Set<Int> = [], configuration: (_ ports: [Int], _ directory: String) -> String
    ) throws -> (process: RedisProcess, ports: [Int]) {
        var lastError: Error?
        for _ in 1...5 {
            let ports = try freePorts(1 + extraPorts, excluding: excluding)
            let directory = "\(root)/\(ports[0])"
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try configuration(ports, directory).write(toFile: directory + "/redis.conf", atomically: true, encoding: .utf8)
            } catch {
                throw TestSupportError.processFailed.with("cannot prepare \(directory): \(error)")
            }
            let process = RedisProcess(
                executable: executable, port: ports[0], directory: directory, extraArguments: extraArguments, password: password)
            do {
                try process.launch()
                return (process, ports)
            } catch let error as TestSupportError where error.message.contains("Address already in use") {
                lastError = error  // another process took a port between probe and bind: try others
                TemporaryDirectory.remove(directory)
            }
        }
        throw lastError!
    }

    /// `count` free loopback ports, all different from each other and from `excluding`.
    private static func freePorts(_ count: Int, excluding: Set<Int>) throws -> [Int] {
        var chosen: [Int] = []
        var attempts = 0
        while chosen.count < count {
            attempts += 1
            guard attempts < 100 else { throw TestSupportError.connection.with("cannot find \(count) free loopback ports") }
            let port = try LoopbackPort.free()
            if !excluding.contains(port) && !chosen.contains(port) { chosen.append(port) }
        }
        return chosen
    }

    private init(executable: String, port: Int, directory: String, extraArguments: [String], password: String?) {
        self.executable = executable
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
        self.password = password
    }

    /// The process id while it runs.
    var pid: Int32? {
        child.withLock { $0?.exitStatus == nil ? $0?.pid : nil }
    }

    var isRunning: Bool { pid != nil }

    /// A new client on this process's port (authenticated when the config sets a password).
    func client(timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try RedisTestClient(port: port, password: password, timeout: timeout)
    }

    /// (Re)starts the process on the same port, directory and config, and waits for `PING`.
    /// Throws `TestSupportError.didNotStart` with the tails of its log and console.
    func launch() throws {
        try child.withLock { running in
            if let running, running.exitStatus == nil { return }
            let child = try ChildProcess(
                executable: executable, arguments: [directory + "/redis.conf"] + extraArguments,
                outputPath: directory + "/redis.console")
            let deadline = PatientDeadline(Self.startupTimeout)  // a frozen test process is given its time
            var lastProblem = "no answer yet"
            while deadline.hasTimeLeft {
                if let status = child.exitStatus {
                    throw didNotStart("redis-server exited (\(status)) on port \(port)")
                }
                do {
                    let client = try self.client(timeout: .milliseconds(500))
                    let reply = try client.command("PING")
                    // The answer must come from our child: when two tests probe the same free port,
                    // the other one's Redis answers here while ours fails to bind and exits.
                    if reply == .simpleString("PONG"), try RedisNodes.info(client, "server")["process_id"] == "\(child.pid)" {
                        running = child
                        return
                    }
                    lastProblem = "PING answered \(reply)"  // e.g. -LOADING while the AOF is replayed
                } catch {
                    lastProblem = "\(error)"
                }
                pauseBriefly()
            }
            child.terminate(grace: .seconds(2))
            throw didNotStart("redis-server did not answer PING on 127.0.0.1:\(port) within \(Self.startupTimeout) (\(lastProblem))")
        }
    }

    /// Sends `signal` (SIGSTOP, SIGCONT...) if the process runs.
    func send(_ signal: Int32) {
        child.withLock { $0?.send(signal) }
    }

    /// SIGKILL, as a crash would; waits until the process is gone. The directory stays.
    func kill() {
        child.withLock { child in
            child?.send(SIGKILL)
            child?.waitForExit(timeout: .seconds(10))
            child = nil
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; waits until the process is gone.
    func terminate(grace: Duration = .seconds(5)) {
        child.withLock { child in
            child?.terminate(grace: grace)
            child = nil
        }
    }

    /// Terminates every one of `processes`, sending each SIGTERM first so that they shut down
    /// at the same time.
    static func terminateAll(_ processes: [RedisProcess]) {
        for process in processes {
            process.send(SIGTERM)
            process.send(SIGCONT)  // a stopped process acts on SIGTERM only once continued
        }
        processes.forEach { $0.terminate() }
    }

    private func didNotStart(_ summary: String) -> TestSupportError {
        let log = tail(readText(directory + "/redis.log"), lines: 15)
        let console = tail(readText(directory + "/redis.console"), lines: 15)
        return TestSupportError.didNotStart.with(
            "\(summary)\n--- redis.log (tail) ---\n\(log)\n--- console (tail) ---\n\(console)")
    }
}

// MARK: - Shared helpers of the Redis setups

enum RedisNodes {
    /// `redis-server` (`$RESENDGATE_REDIS_SERVER`, else on `PATH`, else in the usual places)
    /// and its major version from `--version` ("Redis server v=7.0.15 ..."; 0 if unknown),
    /// looked up once.
    static let server = Result { () throws -> (path: String, majorVersion: Int) in
        let preferred = ProcessInfo.processInfo.environment["RESENDGATE_REDIS_SERVER"].map { [$0] } ?? []
        let path = try locate("redis-server", preferring: preferred, debianPackage: "redis-server")
        let version = try? CommandRunner.run(path, ["--version"], timeout: .seconds(5))
        let major = version?.stdout.split(separator: " ").first { $0.hasPrefix("v=") }
            .flatMap { Int($0.dropFirst(2).prefix { $0.isNumber }) } ?? 0
        return (path, major)
    }

    /// `redis-cli` next to `redis-server`, else on `PATH`, else the usual places.
    static func locateCLI(nextTo server: String) throws -> String {
        let neighbour = URL(fileURLWithPath: server).deletingLastPathComponent().appendingPathComponent("redis-cli").path
        return try locate("redis-cli", preferring: [neighbour], debianPackage: "redis-tools")
    }

    /// The first executable of `preferred`, else `name` on `PATH`, else in the usual places.
    private static func locate(_ name: String, preferring preferred: [String], debianPackage: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]
        let candidates = preferred + folders.map { "\($0)/\(name)" }
        if let found = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) { return found }
        throw TestSupportError.executableNotFound.with(
            "\(name) not found (looked at \(candidates.prefix(3).joined(separator: ", ")), ...); "
                + "install it with deploy/install-deps (Debian package \(debianPackage))")
    }

    /// `INFO section` as a dictionary of its `field:value` lines.
    static func info(_ client: RedisTestClient, _ section: String) throws -> [String: String] {
        let reply = try client.command("INFO", section)
        guard let text = reply.string else {
            throw TestSupportError.protocolViolation.with("INFO \(section) at \(client.endpoint) answered \(reply)")
        }
        return fields(text)
    }

    /// `field:value` lines (INFO, CLUSTER INFO) as a dictionary; comments and blanks skipped.
    static func fields(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            result[String(line[..<colon])] = String(line[line.index(after: colon)...])
        }
        return result
    }

    /// Polls `probe` until it returns a value or `timeout` passes; the error then names
    /// `what` and the last thing the probe saw.
    static func waitUntil<T>(
        _ what: String, timeout: Duration, _ probe: () throws -> (value: T?, seen: String)
    ) throws -> T {
        let deadline = PatientDeadline(timeout)  // a frozen test process is given its time
        var seen = "nothing yet"
        while true {
            do {
                let (value, latest) = try probe()
                if let value { return value }
                seen = latest
            } catch {
                seen = "\(error)"
            }
            guard deadline.hasTimeLeft else {
                throw TestSupportError.timeout.with("\(what) did not happen within \(timeout); last seen: \(seen)")
            }
            pauseBriefly(.milliseconds(50))
        }
    }
}
