import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `redis-server` process of a multi-node test setup (`RedisCluster`, `RedisSentinelSet`):
/// a port, a directory `<root>/<port>` inside the setup's temp folder, and a config file
/// written from `RedisServer.Options` plus the lines the setup adds. Unlike `RedisServer` it
/// does not own its directory (the setup removes its whole root at once) and it can be killed
/// and started again on the same port and directory.
final class RedisNodeProcess: Sendable {
    private struct State: Sendable {
        var child: ChildProcess?
    }

    let port: Int
    let directory: String
    /// `redis-server` arguments after the config file (`--sentinel` for a sentinel).
    let extraArguments: [String]
    private let executable: String
    private let state: Mutex<State>

    /// Starts a node in `<root>/<port>` and waits for `PING`. `configuration` receives the
    /// port and directory and returns the whole redis.conf. Ports are chosen by `choosePorts`
    /// (called again when one turns out to be taken between probe and bind).
    static func start(
        executable: String, root: String, extraArguments: [String] = [], startupTimeout: Duration,
        choosePorts: () throws -> (port: Int, extra: [Int]),
        configuration: (_ port: Int, _ extra: [Int], _ directory: String) -> String
    ) throws -> (node: RedisNodeProcess, extraPorts: [Int]) {
        var lastError: Error?
        for _ in 1...5 {
            let (port, extra) = try choosePorts()
            let directory = "\(root)/\(port)"
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try configuration(port, extra, directory).write(
                    toFile: directory + "/redis.conf", atomically: true, encoding: .utf8)
            } catch {
                throw TestSupportError.processFailed.with("cannot prepare \(directory): \(error)")
            }
            let node = RedisNodeProcess(
                executable: executable, port: port, directory: directory, extraArguments: extraArguments)
            do {
                try node.launch(startupTimeout: startupTimeout)
                return (node, extra)
            } catch let error as TestSupportError where error.message.contains("Address already in use") {
                lastError = error  // another process took a port between probe and bind: try others
                TemporaryDirectory.remove(directory)
            }
        }
        throw lastError!
    }

    private init(executable: String, port: Int, directory: String, extraArguments: [String]) {
        self.executable = executable
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
        self.state = Mutex(State())
    }

    /// The process id while it runs.
    var pid: Int32? {
        state.withLock { $0.child?.exitStatus == nil ? $0.child?.pid : nil }
    }

    /// Whether the process runs.
    var isRunning: Bool { pid != nil }

    /// A new client on this node's port.
    func client(timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try RedisTestClient(port: port, timeout: timeout)
    }

    /// The last lines of the node's log.
    func logTail(lines: Int = 20) -> String {
        tail(readText(directory + "/redis.log"), lines: lines)
    }

    /// (Re)starts the process on the same port, directory and config, and waits for `PING`.
    func launch(startupTimeout: Duration) throws {
        try state.withLock { state in
            if let child = state.child, child.exitStatus == nil { return }
            let child = try ChildProcess(
                executable: executable, arguments: [directory + "/redis.conf"] + extraArguments,
                outputPath: directory + "/redis.console")
            let deadline = PatientDeadline(startupTimeout)  // a frozen test process is given its time
            var lastProblem = "no answer yet"
            while deadline.hasTimeLeft {
                if let status = child.exitStatus {
                    throw didNotStart("redis-server exited (\(status)) on port \(port)")
                }
                do {
                    let reply = try RedisTestClient(port: port, timeout: .milliseconds(500)).command("PING")
                    if reply == .simpleString("PONG") {
                        state.child = child
                        return
                    }
                    lastProblem = "PING answered \(reply)"
                } catch {
                    lastProblem = "\(error)"
                }
                pauseBriefly()
            }
            child.terminate(grace: .seconds(2))
            throw didNotStart("redis-server did not answer PING on 127.0.0.1:\(port) within \(startupTimeout) (\(lastProblem))")
        }
    }

    /// SIGKILL, as a crash would; waits until the process is gone. The directory stays.
    func kill() {
        state.withLock { state in
            state.child?.send(SIGKILL)
            state.child?.waitForExit(timeout: .seconds(10))
            state.child = nil
        }
    }

    /// Sends SIGTERM without waiting, so that many nodes can shut down at the same time.
    func beginTermination() {
        state.withLock { state in
            state.child?.send(SIGTERM)
            state.child?.send(SIGCONT)
        }
    }

    /// SIGTERM, then SIGKILL after `grace`; waits until the process is gone.
    func terminate(grace: Duration = .seconds(5)) {
        state.withLock { state in
            state.child?.terminate(grace: grace)
            state.child = nil
        }
    }

    private func didNotStart(_ summary: String) -> TestSupportError {
        let log = tail(readText(directory + "/redis.log"), lines: 15)
        let console = tail(readText(directory + "/redis.console"), lines: 15)
        return TestSupportError.didNotStart.with(
            "\(summary)\n--- redis.log (tail) ---\n\(log)\n--- console (tail) ---\n\(console)")
    }
}

// MARK: - Shared helpers for the multi-node setups

enum RedisNodes {
    /// Free loopback ports, all different from each other and from `excluding`.
    static func freePorts(_ count: Int, excluding: Set<Int>) throws -> [Int] {
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

    /// `redis-cli` next to `redis-server`, else on `PATH`, else the usual places.
    static func locateCLI(nextTo server: String) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        var candidates = [URL(fileURLWithPath: server).deletingLastPathComponent().appendingPathComponent("redis-cli").path]
        candidates += (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/redis-cli" }
        candidates += ["/usr/bin/redis-cli", "/usr/local/bin/redis-cli", "/opt/homebrew/bin/redis-cli"]
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw TestSupportError.executableNotFound.with(
            "redis-cli not found (looked next to \(server) and on PATH); install it with deploy/install-deps "
                + "(Debian package redis-tools)")
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
        _ what: String, timeout: Duration, interval: Duration = .milliseconds(50),
        _ probe: () throws -> (value: T?, seen: String)
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
            pauseBriefly(interval)
        }
    }
}

/// Blocks the calling thread for `duration` (the multi-node helpers' pauses between steps).
func sleepBlocking(_ duration: Duration) {
    guard duration > .zero else { return }
    let deadline = ContinuousClock.now + duration
    while ContinuousClock.now < deadline {
        pauseBriefly(min(.milliseconds(100), deadline - ContinuousClock.now))
    }
}
