import Countdown
import Foundation
import ResendGateClient
import ResendGateServerTestSupport
import ResendGateTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `redis-server` and a real `resendgate serve` process in front of it (a
/// `TestGate` in process mode). The server picks a free loopback port itself (`--port 0`:
/// a port chosen here first could be taken before it binds) and `restart()` starts it again
/// on that port, where clients left it.
final class LiveGate: Sendable {
    let gate: TestGate
    let cooldown: String
    var port: Int { gate.port }
    var redis: RedisServer { gate.redis }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The gate's options beyond the cooldown (`--issue-codes ...`).
    let options: [String]

    init(cooldown: String, apiKey: String? = nil, options: [String] = []) throws {
        self.cooldown = cooldown
        self.options = options
        gate = try TestGate(serve: Self.arguments(cooldown: cooldown) + options, apiKey: apiKey)
    }

    /// A client on `clock` (the system's by default).
    func client(clock: any CountdownClock = SystemCountdownClock()) -> ResendGateClient {
        ResendGateClient(baseURL: baseURL, clock: clock)
    }

    // Starting, killing and stopping processes block: each runs off the cooperative pool.

    /// `kill -9`: open streams drop without a word.
    func kill() async {
        await offThePool { [gate] in gate.kill() }
    }

    /// Starts the server again on the same port and Redis.
    func restart() async throws {
        try await offThePool { [gate] in try gate.restart() }
    }

    func stop() async {
        await offThePool { [gate] in gate.stop(grace: .seconds(2)) }
    }

    /// Runs `body` with the base URL of another `resendgate serve` on the same Redis (a
    /// second gate behind a load balancer), on a port of its own; stops it afterwards.
    func withSecondGate<T>(isolation: isolated (any Actor)? = #isolation,
                           _ body: (URL) async throws -> T) async throws -> T {
        let arguments = Self.arguments(cooldown: cooldown) + options + ["--redis", redis.url]
        let second = try await offThePool { [gate] in
            try TestGate(serve: arguments, ownRedis: false, apiKey: gate.clientAPIKey)
        }
        do {
            let result = try await body(URL(string: "http://127.0.0.1:\(second.port)")!)
            await offThePool { second.stop(grace: .seconds(2)) }
            return result
        } catch {
            await offThePool { second.stop(grace: .seconds(2)) }
            throw error
        }
    }

    private static func arguments(cooldown: String) -> [String] {
        ["--workers", "1", "--log-level", "info", "--region", "CN", "--cooldown", cooldown]
    }
}

/// Runs `body` against a fresh gate and stops it afterwards; the start and the stop hold
/// no cooperative thread (nor the main actor, for suites on it).
func withLiveGate<T>(isolation: isolated (any Actor)? = #isolation, cooldown: String, apiKey: String? = nil,
                     options: [String] = [], _ body: (LiveGate) async throws -> T) async throws -> T {
    let gate = try await offThePool { try LiveGate(cooldown: cooldown, apiKey: apiKey, options: options) }
    do {
        let result = try await body(gate)
        await gate.stop()
        return result
    } catch {
        await gate.stop()
        throw error
    }
}

/// The wall clock off by `skew` (a device clock set wrong), monotonic time the system's.
struct SkewedClock: CountdownClock {
    let skew: TimeInterval
    private let system = SystemCountdownClock()

    var now: CountdownInstant { system.now }
    var wallNow: Date { Date().addingTimeInterval(skew) }
}
