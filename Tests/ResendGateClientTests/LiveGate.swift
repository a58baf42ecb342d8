import Countdown
import Foundation
import ResendGateClient
import ResendGateTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `redis-server` and a real `resendgate serve` process in front of it, on a fixed
/// loopback port so that the server can be killed and started again where clients left it.
final class LiveGate: @unchecked Sendable {
    // @unchecked: `server` is replaced only by the test that owns the gate, between requests.
    let redis: RedisServer
    let port: Int
    let cooldown: String
    let apiKey: String?
    private(set) var server: ServerProcess

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    init(cooldown: String, apiKey: String? = nil) throws {
        redis = try RedisServer()
        do {
            port = try LoopbackPort.free()
            self.cooldown = cooldown
            self.apiKey = apiKey
            server = try Self.launch(port: port, redis: redis, cooldown: cooldown, apiKey: apiKey)
        } catch {
            redis.stop()
            throw error
        }
    }

    /// A client on `clock` (the system's by default).
    func client(clock: any CountdownClock = SystemCountdownClock()) -> ResendGateClient {
        ResendGateClient(baseURL: baseURL, clock: clock)
    }

    /// `kill -9`: open streams drop without a word.
    func kill() {
        server.signal(SIGKILL)
        _ = server.waitForExit(timeout: .seconds(5))
    }

    /// Starts the server again on the same port and Redis.
    func restart() throws {
        server = try Self.launch(port: port, redis: redis, cooldown: cooldown, apiKey: apiKey)
    }

    func stop() {
        server.stop(grace: .seconds(2))
        redis.stop()
    }

    /// Another `resendgate serve` on the same Redis (a second gate behind a load
    /// balancer), on a port of its own; the caller stops it.
    func secondGate() throws -> (process: ServerProcess, baseURL: URL) {
        let port = try LoopbackPort.free()
        let process = try Self.launch(port: port, redis: redis, cooldown: cooldown, apiKey: apiKey)
        return (process, URL(string: "http://127.0.0.1:\(port)")!)
    }

    private static func launch(port: Int, redis: RedisServer, cooldown: String, apiKey: String?) throws -> ServerProcess {
        let keys = apiKey.map { ["--api-keys", $0] } ?? []
        let server = try ServerProcess(try BuiltProducts.executable(named: "resendgate"), [
            "serve", "--port", "\(port)", "--workers", "1", "--redis", redis.url, "--log-level", "info",
            "--region", "CN", "--cooldown", cooldown,
        ] + TestPurposes.arguments + keys)
        do {
            _ = try server.waitForListeningPort()
            let deadline = ContinuousClock.now + .seconds(10)
            while !isReady(port: port) {
                guard ContinuousClock.now < deadline else { throw TestGateError.notReady(server.stderr) }
                usleep(20_000)
            }
            return server
        } catch {
            server.stop(grace: .seconds(1))
            throw error
        }
    }

    private static func isReady(port: Int) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let status = StatusBox()
        let task = URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:\(port)/readyz")!) { _, response, _ in
            status.set((response as? HTTPURLResponse)?.statusCode)
            done.signal()
        }
        task.resume()
        _ = done.wait(timeout: .now() + 2)
        return status.get() == 200
    }
}

enum TestGateError: Error {
    case notReady(String)
}

private final class StatusBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var status: Int?

    func set(_ value: Int?) { lock.withLock { status = value } }

    func get() -> Int? { lock.withLock { status } }
}

/// Runs `body` against a fresh gate and stops it afterwards.
func withLiveGate<T>(isolation: isolated (any Actor)? = #isolation, cooldown: String, apiKey: String? = nil,
                     _ body: (LiveGate) async throws -> T) async throws -> T {
    let gate = try LiveGate(cooldown: cooldown, apiKey: apiKey)
    defer { gate.stop() }
    return try await body(gate)
}

/// The wall clock off by `skew` (a device clock set wrong), monotonic time the system's.
struct SkewedClock: CountdownClock {
    let skew: TimeInterval
    private let system = SystemCountdownClock()

    var now: CountdownInstant { system.now }
    var wallNow: Date { Date().addingTimeInterval(skew) }
}
