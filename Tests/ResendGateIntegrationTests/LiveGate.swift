import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

// MARK: - A gate on its own real Redis

/// The number most tests use, in canonical form, and its keys under the default prefix.
let number = "+8613800138000"

func cooldownKey(_ e164: String = number, purpose: String = "default") -> String { gateKey(.cooldown, e164, purpose: purpose) }
func windowKey(_ e164: String = number, purpose: String = "default") -> String { gateKey(.window, e164, purpose: purpose) }
func refundsKey(_ e164: String = number, purpose: String = "default") -> String { gateKey(.refunds, e164, purpose: purpose) }

/// Starts a fresh `redis-server`, makes a `Gate` on it, runs `body`, then stops Redis
/// whatever happened. The gate is created with `url` (default: the server's own URL).
func withLiveGate<T>(
    redis options: RedisServer.Options = .init(),
    url: ((RedisServer) -> String)? = nil,
    policy: Policy = .default,
    region: String? = "CN",
    timeout: Duration = liveGateTimeout,
    _ body: (RedisServer, Gate) async throws -> T
) async throws -> T {
    try await withRedis(options) { redis in
        let gate = try makeGate(url: url?(redis) ?? redis.url, policy: policy, region: region, timeout: timeout)
        return try await body(redis, gate)
    }
}

/// Starts a fresh `redis-server`, runs `body`, then stops Redis whatever happened; the
/// start and the stop hold no cooperative thread.
func withRedis<T>(_ options: RedisServer.Options = .init(), _ body: (RedisServer) async throws -> T) async throws -> T {
    let redis = try await startRedis(options)
    do {
        let result = try await body(redis)
        await offThePool { redis.stop() }
        return result
    } catch {
        await offThePool { redis.stop() }
        throw error
    }
}

/// Starts a `redis-server` without holding a cooperative thread while it boots.
func startRedis(_ options: RedisServer.Options = .init()) async throws -> RedisServer {
    try await offThePool { try RedisServer(options) }
}

/// Runs `body` on a thread of its own and returns its result with how long it took, so
/// that a latency measurement counts the gate's time and not the wait for a free
/// cooperative thread (other suites hold them while their redis-servers boot).
func timedOnOwnThread<T: Sendable>(_ body: @Sendable () async -> T) async -> (T, Duration) {
    await onOwnThread(named: "latency-probe") {
        let start = ContinuousClock.now
        let result = await body()
        return (result, ContinuousClock.now - start)
    }
}

/// The milliseconds of real time since `start`: a wait Redis counts down is that much
/// shorter, this process frozen meanwhile or not (CI froze test processes for up to 15 s).
func millisecondsPassed(since start: ContinuousClock.Instant) -> Int64 {
    Int64((ContinuousClock.now - start) / .milliseconds(1))
}

/// Checks a denial's remaining time against what can have elapsed: Redis counts down from
/// `granted` ms set after `start`, so `remaining` lies in [granted - elapsed, granted], and
/// within a second of the grant it rounds up to the same whole seconds.
func expectRemaining(
    _ remaining: Int64, of granted: Int64 = 60_000, since start: ContinuousClock.Instant,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let elapsed = ContinuousClock.now - start
    let elapsedMilliseconds = Int64(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    #expect(remaining <= granted, sourceLocation: sourceLocation)
    // Redis counts on its wall clock and this on the monotonic one: an NTP slew (up to
    // 500 ppm) and millisecond truncation on both sides can put them a few ms apart.
    let slack = 3 + elapsedMilliseconds / 1_000
    #expect(remaining >= granted - elapsedMilliseconds - slack, "elapsed \(elapsed)", sourceLocation: sourceLocation)
    if elapsedMilliseconds < 1_000 {
        #expect(remaining > granted - 1_000, sourceLocation: sourceLocation)
        #expect(Decision.wholeSeconds(remaining) == Decision.wholeSeconds(granted), sourceLocation: sourceLocation)
    }
}

extension PolicySet {
    /// These policies with `names` configured too (`plainPurposes`).
    func configuring(_ names: Set<String>) -> PolicySet {
        var configured = self
        configured.plainPurposes.formUnion(names)
        return configured
    }
}

/// The Redis timeouts of the suites' gates unless a test sets its own (the tests of
/// timeouts do). The gate runs in this process: frozen past a 1 s timeout (CI froze test
/// processes for up to 15 s), it met its connect or command deadline on waking, though
/// Redis had answered meanwhile ("could not connect to Redis within 1.0 seconds").
let liveGateTimeout: Duration = .seconds(20)

/// A gate on `url` with both Redis timeouts set to `timeout`, deciding the suites' purposes.
func makeGate(
    url: String, policy: Policy = .default, region: String? = "CN", timeout: Duration = liveGateTimeout,
    windowCooldownsPeriod: Duration = GateConfiguration.defaultWindowCooldownsPeriod, cooldownsInWindows: Bool = false
) throws -> Gate {
    let redis = try RedisConfiguration(url: url, connectTimeout: timeout, commandTimeout: timeout)
    var configuration = try GateConfiguration(
        redis: redis, policies: PolicySet(fallback: policy, plainPurposes: TestPurposes.names), defaultRegion: region)
    configuration.windowCooldownsPeriod = windowCooldownsPeriod
    configuration.cooldownsInWindows = cooldownsInWindows
    return Gate(configuration: configuration)
}

/// The calls of `command` in `INFO commandstats` (0 when it has none).
func commandCalls(_ command: String, in stats: String) -> Int {
    guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):calls=") }) else { return 0 }
    return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? 0
}

/// The error `body` throws, or nil when it succeeds.
func gateError<T>(_ body: () async throws(GateError) -> T) async -> GateError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Calls `body` every `interval` until it returns a value, at most for `limit`: for waiting
/// on recovery or on Redis expiring a key, never for checking a countdown's value. The
/// limit is this process's running time: the gate's reconnection runs in it, and a process
/// frozen past the limit (CI) would otherwise give it one try only.
func poll<T>(
    every interval: Duration = .milliseconds(50), upTo limit: Duration = .seconds(3), _ body: () async -> T?
) async throws -> T? {
    let deadline = PatientDeadline(limit)
    while true {
        if let value = await body() { return value }
        if deadline.hasPassed { return nil }
        try await Task.sleep(for: interval)
    }
}

extension RedisTestClient {
    /// `PTTL key` as an integer (-2: no key).
    func pttl(_ key: String) throws -> Int? { try command("PTTL", key).integer }

    /// Every key matching `pattern`, sorted; by default the keys of numbers (not
    /// the countdown-token, per-IP or idempotency keys).
    func keys(_ pattern: String = "rg:{*") throws -> [String] {
        (try command("KEYS", pattern).array ?? []).compactMap(\.string).sorted()
    }
}

/// A loopback port nothing listens on, held for the test run: a port probed free and given
/// back could be taken by another test's redis-server before the test connects.
func closedPort() throws -> Int {
    let port = try LoopbackPort.refusing()
    precondition(!LoopbackPort.isAccepting(port))
    return port
}
