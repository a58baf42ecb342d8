import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `redis-server` for one test: its own free loopback port, its own temp directory.
///
/// ```swift
/// let redis = try RedisServer()
/// defer { redis.stop() }
/// let client = try redis.client()
/// #expect(try client.command("PING") == .simpleString("PONG"))
/// ```
///
/// Each instance is independent, so tests running in parallel never share a port or a
/// directory. The calls block the calling thread (startup takes tens of milliseconds).
/// `deinit` stops the server too, but call `stop()` so the directory goes away at once.
public final class RedisServer: Sendable {
    private struct State: Sendable {
        var child: ChildProcess?
        var stopped = false
    }

    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The server's own directory: redis.conf, redis.log, the AOF, the unix socket.
    public let directory: String
    /// `<directory>/redis.sock` when `Options.unixSocket` is on.
    public let unixSocketPath: String?
    /// The options it was started with.
    public let options: Options
    private let executable: String
    private let state: Mutex<State>

    /// Starts `redis-server` and waits until it answers `PING`.
    /// Throws `TestSupportError.executableNotFound` or `.didNotStart` (with the log tail).
    public init(_ options: Options = Options()) throws {
        let executable = try Self.locateExecutable(options.executable)
        let directory = try TemporaryDirectory.make(prefix: "resendgate-redis-")
        let socketPath = options.unixSocket ? directory + "/redis.sock" : nil
        var lastError: Error?
        for _ in 1...5 {
            do {
                let port = try LoopbackPort.free()
                let child = try Self.launch(
                    executable: executable, port: port, directory: directory, unixSocketPath: socketPath, options: options)
                self.port = port
                self.directory = directory
                self.unixSocketPath = socketPath
                self.options = options
                self.executable = executable
                self.state = Mutex(State(child: child))
                return
            } catch let error as TestSupportError where error.message.contains("Address already in use") {
                lastError = error  // another process took the port between probe and bind: try another
            } catch {
                TemporaryDirectory.remove(directory)
                throw error
            }
        }
        TemporaryDirectory.remove(directory)
        throw lastError!
    }

    deinit {
        stop()
    }

    // MARK: Addresses

    /// `redis://127.0.0.1:PORT/0`, or `redis://default:PASSWORD@127.0.0.1:PORT/0` with a password.
    public var url: String {
        let credentials = options.password.map { "default:\(percentEncoded($0))@" } ?? ""
        return "redis://\(credentials)127.0.0.1:\(port)/0"
    }

    /// `unix:///path/redis.sock` when `Options.unixSocket` is on.
    public var unixSocketURL: String? {
        unixSocketPath.map { "unix://\($0)" }
    }

    /// The server's process id while it runs.
    public var pid: Int32? {
        state.withLock { $0.child?.exitStatus == nil ? $0.child?.pid : nil }
    }

    /// A new client connected over TCP (authenticated when a password is set).
    public func client(timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try RedisTestClient(port: port, password: options.password, timeout: timeout)
    }

    /// The last lines of `redis.log`, for failure messages.
    public func logTail(lines: Int = 20) -> String {
        tail(readText(directory + "/redis.log"), lines: lines)
    }

    // MARK: Lifecycle

    /// Stops Redis (SIGTERM, then SIGKILL after 5 s) and removes its directory. Idempotent.
    public func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.child?.terminate(grace: .seconds(5))
            state.child = nil
            state.stopped = true
        }
        TemporaryDirectory.remove(directory)
    }

    /// Kills Redis with SIGKILL, as a crash would, and waits until it is gone. The directory stays,
    /// so `restart()` recovers whatever the AOF had fsynced.
    public func kill() {
        state.withLock { state in
            state.child?.send(SIGKILL)
            state.child?.waitForExit(timeout: .seconds(10))
            state.child = nil
        }
    }

    /// Freezes Redis (SIGSTOP): connections still open, nothing answers. Undo with `resume()`.
    public func pause() {
        state.withLock { $0.child?.send(SIGSTOP) }
    }

    /// Thaws a paused Redis (SIGCONT).
    public func resume() {
        state.withLock { $0.child?.send(SIGCONT) }
    }

    /// Stops Redis if it runs (SIGTERM, so the AOF is flushed) and starts it again on the same
    /// port and directory, waiting for `PING`. After `kill()` it recovers like after a crash.
    public func restart() throws {
        try state.withLock { state in
            guard !state.stopped else {
                throw TestSupportError.invalidState.with("restart() after stop(): the directory is gone")
            }
            state.child?.terminate(grace: .seconds(5))
            state.child = nil
            state.child = try Self.launch(
                executable: executable, port: port, directory: directory, unixSocketPath: unixSocketPath,
                options: options)
        }
    }

    // MARK: Launching

    private static func launch(
        executable: String, port: Int, directory: String, unixSocketPath: String?, options: Options
    ) throws -> ChildProcess {
        let configPath = directory + "/redis.conf"
        let configuration = options.configuration(
            port: port, directory: directory, unixSocketPath: unixSocketPath,
            redisMajorVersion: majorVersion(of: executable))
        do {
            try configuration.write(toFile: configPath, atomically: true, encoding: .utf8)
        } catch {
            throw TestSupportError.processFailed.with("cannot write \(configPath): \(error)")
        }
        let child = try ChildProcess(executable: executable, arguments: [configPath], outputPath: directory + "/redis.console")

        let deadline = PatientDeadline(options.startupTimeout)  // a frozen test process is given its time
        var lastProblem = "no answer yet"
        while deadline.hasTimeLeft {
            if let status = child.exitStatus {
                throw didNotStart("redis-server exited (\(status)) on port \(port)", directory: directory)
            }
            do {
                let client = try RedisTestClient(port: port, password: options.password, timeout: .milliseconds(500))
                let reply = try client.command("PING")
                // The answer must come from our child: when two tests probe the same free port,
                // the other one's Redis answers here while ours fails to bind and exits.
                if reply == .simpleString("PONG"), try answeringProcess(client) == child.pid { return child }
                lastProblem = "PING answered \(reply)"  // e.g. -LOADING while the AOF is replayed
            } catch {
                lastProblem = "\(error)"
            }
            pauseBriefly()
        }
        child.terminate(grace: .seconds(2))
        throw didNotStart(
            "redis-server did not answer PING on 127.0.0.1:\(port) within \(options.startupTimeout) (\(lastProblem))",
            directory: directory)
    }

    /// The pid of the Redis behind `client` (`INFO server`'s process_id).
    private static func answeringProcess(_ client: RedisTestClient) throws -> Int32? {
        let info = try client.command("INFO", "server").string ?? ""
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("process_id:") }
        return line.flatMap { Int32($0.dropFirst("process_id:".count).trimmingCharacters(in: .whitespaces)) }
    }

    private static func didNotStart(_ summary: String, directory: String) -> TestSupportError {
        let log = tail(readText(directory + "/redis.log"), lines: 15)
        let console = tail(readText(directory + "/redis.console"), lines: 15)
        return TestSupportError.didNotStart.with(
            "\(summary)\n--- redis.log (tail) ---\n\(log)\n--- console (tail) ---\n\(console)")
    }

    // MARK: Finding redis-server

    /// `explicit`, else `$RESENDGATE_REDIS_SERVER`, else `redis-server` on `PATH`, else the usual places.
    static func locateExecutable(_ explicit: String?) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit { candidates.append(explicit) }
        if let fromEnvironment = environment["RESENDGATE_REDIS_SERVER"] { candidates.append(fromEnvironment) }
        if explicit == nil {
            let path = environment["PATH"] ?? ""
            candidates += path.split(separator: ":").map { "\($0)/redis-server" }
            candidates += ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/opt/homebrew/bin/redis-server"]
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return found
        }
        throw TestSupportError.executableNotFound.with(
            "redis-server not found (looked at \(candidates.prefix(3).joined(separator: ", ")), ...); "
                + "install it with deploy/install-deps (Debian package redis-server)")
    }

    private static let versions = Mutex<[String: Int]>([:])

    /// The major version from `redis-server --version` ("Redis server v=7.0.15 ..."), cached; 0 if unknown.
    static func majorVersion(of executable: String) -> Int {
        if let known = versions.withLock({ $0[executable] }) { return known }
        let result = try? CommandRunner.run(executable, ["--version"], timeout: .seconds(5))
        let major = result?.stdout.split(separator: " ").first { $0.hasPrefix("v=") }
            .flatMap { Int($0.dropFirst(2).prefix { $0.isNumber }) } ?? 0
        versions.withLock { $0[executable] = major }
        return major
    }
}

private func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}
