import Foundation
import ResendGate
import ResendGateServer
import ResendGateTestSupport

/// The tests' one "Redis plus gate" fixture: a real `redis-server` on a free loopback port
/// (or none, for gates on a Redis the test runs itself) and a gate in front of it, in one
/// of two modes. `inProcess`: an `HTTPServer` in the test's process, configured with typed
/// values. `process`: the built `resendgate serve` as a child process, with the flags an
/// operator passes, for tests that read its memory or CPU, signal it, kill and restart it.
/// Both start, wait for `/readyz` and stop the same way. Call `stop()` (or use `with`).
public final class TestGate: @unchecked Sendable {
    // @unchecked: `server` is replaced only by `restart()`, called by the test that owns the gate.

    /// What runs the gate.
    public enum Server {
        case inProcess(HTTPServer)
        case process(ServerProcess)
    }

    /// The gate's own Redis (nil when the test passed `--redis` flags for one of its own).
    public let ownRedis: RedisServer?
    public private(set) var server: Server
    /// Where the gate listens on 127.0.0.1.
    public let port: Int
    /// The key the gate was started with (`--api-keys`), sent by `client()` as
    /// `Authorization: Bearer`, when set.
    public let clientAPIKey: String?
    private let launch: (_ port: Int) throws -> Server

    /// The gate's own Redis; only for gates that have one.
    public var redis: RedisServer {
        guard let ownRedis else { preconditionFailure("this gate runs on a Redis its test started") }
        return ownRedis
    }

    /// The in-process server (nil in process mode).
    public var httpServer: HTTPServer? {
        if case .inProcess(let server) = server { server } else { nil }
    }

    /// The child process (nil for an in-process gate).
    public var process: ServerProcess? {
        if case .process(let process) = server { process } else { nil }
    }

    /// The shared core: starts Redis (unless `startRedis` is false), then the gate on `port`
    /// (0: a free one), then waits until `/readyz` answers 200. Whatever fails stops what started.
    private init(
        startRedis: Bool, redisOptions: RedisServer.Options, port: Int, apiKey: String?, waitUntilReady: Bool,
        launch: @escaping (_ redis: RedisServer?, _ port: Int) throws -> Server
    ) throws {
        let redis = startRedis ? try RedisServer(redisOptions) : nil
        ownRedis = redis
        self.clientAPIKey = apiKey
        self.launch = { try launch(redis, $0) }
        do {
            server = try self.launch(port)
            self.port = try Self.port(of: server)
        } catch {
            redis?.stop()
            throw error
        }
        if waitUntilReady {
            do {
                try client(timeout: .seconds(3)).waitUntilReady(timeout: .seconds(20))
            } catch {
                stop()
                throw error
            }
        }
    }

    /// An in-process `HTTPServer` on its own Redis, configured from that Redis's URL.
    /// `waitUntilReady: false` returns before the workers have reached Redis.
    public convenience init(
        redis options: RedisServer.Options = .init(), apiKey: String? = nil, waitUntilReady: Bool = true,
        configuration: @escaping (RedisServer) throws -> (server: ServerConfiguration, gate: GateConfiguration)
    ) throws {
        try self.init(startRedis: true, redisOptions: options, port: 0, apiKey: apiKey, waitUntilReady: waitUntilReady) { redis, _ in
            let (server, gate) = try configuration(redis!)
            return .inProcess(try HTTPServer(configuration: server, gate: gate))
        }
    }

    /// The built `resendgate serve` with `arguments`, on `port` (0: a free one it picks),
    /// and `--redis` to a Redis of its own unless `ownRedis` is false (then `arguments`
    /// name the Redis). `openFileLimit` runs it under that soft and hard RLIMIT_NOFILE.
    public convenience init(
        serve arguments: [String], port: Int = 0, ownRedis: Bool = true, redis options: RedisServer.Options = .init(),
        environment: [String: String] = [:], openFileLimit: Int? = nil, apiKey: String? = nil, waitUntilReady: Bool = true
    ) throws {
        try self.init(startRedis: ownRedis, redisOptions: options, port: port, apiKey: apiKey, waitUntilReady: waitUntilReady) { redis, port in
            var all = ["serve", "--port", "\(port)"] + (redis.map { ["--redis", $0.url] } ?? []) + arguments
            // A gate decides only configured purposes: the suites' own, unless the test names some.
            if !arguments.contains("--purposes") { all += TestPurposes.arguments }
            if let apiKey { all += ["--api-keys", apiKey] }
            let binary = try BuiltProducts.executable(named: "resendgate")
            if let openFileLimit {
                // `exec` keeps the pid the server's.
                return .process(try ServerProcess(
                    "/bin/sh", ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", binary] + all, environment: environment))
            }
            return .process(try ServerProcess(binary, all, environment: environment))
        }
    }

    private static func port(of server: Server) throws -> Int {
        switch server {
        case .inProcess(let server):
            return server.port
        case .process(let process):
            do {
                return try process.waitForListeningPort()
            } catch {
                process.stop(grace: .seconds(1))
                throw error
            }
        }
    }

    /// Runs `body` against a gate made by `make` and stops it afterwards, whatever happens.
    public static func with<T>(_ make: () throws -> TestGate, _ body: (TestGate) throws -> T) throws -> T {
        let gate = try make()
        defer { gate.stop() }
        return try body(gate)
    }

    /// A client of this gate with its API key (or `apiKey`, when given).
    public func client(apiKey: String? = nil, timeout: Duration = .seconds(10)) -> HTTPTestClient {
        HTTPTestClient(port: port, apiKey: apiKey ?? clientAPIKey, timeout: timeout)
    }

    /// Stops the gate (a child: SIGTERM, then SIGKILL after `grace`) and its Redis.
    public func stop(grace: Duration = .seconds(5)) {
        ownRedis?.resume()
        stopServer(grace: grace)
        ownRedis?.stop()
    }

    private func stopServer(grace: Duration) {
        switch server {
        case .inProcess(let server): server.shutdown()
        case .process(let process): process.stop(grace: grace)
        }
    }

    /// `kill -9` of a child gate: open streams drop without a word.
    public func kill() {
        guard let process else { preconditionFailure("kill() is for a child gate") }
        process.signal(SIGKILL)
        _ = process.waitForExit(timeout: .seconds(5))
    }

    /// Starts a child gate again on the same port and Redis (after `kill()`), and waits until ready.
    public func restart() throws {
        guard process != nil else { preconditionFailure("restart() is for a child gate") }
        stopServer(grace: .seconds(1))
        server = try launch(port)
        _ = try Self.port(of: server)
        try client(timeout: .seconds(3)).waitUntilReady(timeout: .seconds(20))
    }
}

// MARK: - What a child gate costs

extension TestGate {
    /// The child's resident memory in bytes (`VmRSS` of `/proc/<pid>/status`).
    public func residentBytes() throws -> Int {
        let pid = try childPID()
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kibibytes = Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") else {
            throw TestSupportError.processFailed.with("no VmRSS in /proc/\(pid)/status")
        }
        return kibibytes * 1024
    }

    /// CPU time the child has used so far, user and system, in seconds (`/proc/<pid>/stat`).
    public func cpuSeconds() throws -> Double {
        let pid = try childPID()
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command name in parentheses: state is field 3, utime 14, stime 15.
        let fields = (stat.split(separator: ")").last ?? "").split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw TestSupportError.processFailed.with("cannot read /proc/\(pid)/stat: \(stat)")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private func childPID() throws -> Int32 {
        guard let process else { throw TestSupportError.invalidState.with("an in-process gate has no pid of its own") }
        return process.pid
    }
}
