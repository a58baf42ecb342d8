import Foundation
import Synchronization

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
    /// The options it was started with.
    public let options: Options
    /// The temp folder holding `directory`.
    private let root: String
    private let process: RedisProcess
    private let stopped = Atomic(false)

    /// Starts `redis-server` and waits until it answers `PING`.
    /// Throws `TestSupportError.executableNotFound` or `.didNotStart` (with the log tail).
    public init(_ options: Options = Options()) throws {
        let (executable, major) = try RedisNodes.server.get()
        let root = try TemporaryDirectory.make(prefix: "resendgate-redis-")
        do {
            (process, _) = try RedisProcess.start(
                executable: executable, root: root, password: options.password,
                configuration: { ports, directory in
                    options.configuration(port: ports[0], directory: directory, redisMajorVersion: major)
                })
        } catch {
            TemporaryDirectory.remove(root)
            throw error
        }
        self.root = root
        self.options = options
    }

    deinit {
        stop()
    }

    // MARK: Addresses

    /// The TCP port on 127.0.0.1.
    public var port: Int { process.port }

    /// The server's own directory: redis.conf, redis.log, the AOF, the unix socket.
    public var directory: String { process.directory }

    /// `<directory>/redis.sock` when `Options.unixSocket` is on.
    public var unixSocketPath: String? {
        options.unixSocket ? directory + "/redis.sock" : nil
    }

    /// `redis://127.0.0.1:PORT/0`, or `redis://default:PASSWORD@127.0.0.1:PORT/0` with a password.
    public var url: String {
        let encoded = options.password.map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }
        let credentials = encoded.map { "default:\($0)@" } ?? ""
        return "redis://\(credentials)127.0.0.1:\(port)/0"
    }

    /// `unix:///path/redis.sock` when `Options.unixSocket` is on.
    public var unixSocketURL: String? {
        unixSocketPath.map { "unix://\($0)" }
    }

    /// The server's process id while it runs.
    public var pid: Int32? { process.pid }

    /// A new client connected over TCP (authenticated when a password is set).
    public func client(timeout: Duration = .seconds(5)) throws -> RedisTestClient {
        try process.client(timeout: timeout)
    }

    // MARK: Lifecycle

    /// Stops Redis (SIGTERM, then SIGKILL after 5 s) and removes its directory. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        process.terminate(grace: .seconds(5))
        TemporaryDirectory.remove(root)
    }

    /// Kills Redis with SIGKILL, as a crash would, and waits until it is gone. The directory stays,
    /// so `restart()` recovers whatever the AOF had fsynced.
    public func kill() {
        process.kill()
    }

    /// Freezes Redis (SIGSTOP): connections still open, nothing answers. Undo with `resume()`.
    public func pause() {
        process.send(SIGSTOP)
    }

    /// Thaws a paused Redis (SIGCONT).
    public func resume() {
        process.send(SIGCONT)
    }

    /// Stops Redis if it runs (SIGTERM, so the AOF is flushed) and starts it again on the same
    /// port and directory, waiting for `PING`. After `kill()` it recovers like after a crash.
    public func restart() throws {
        guard !stopped.load(ordering: .relaxed) else {
            throw TestSupportError.invalidState.with("restart() after stop(): the directory is gone")
        }
        process.terminate(grace: .seconds(5))
        try process.launch()
    }
}
