import Foundation
import RedisClient
import ResendGate
import ResendGateServer
import ResendGateServerTestSupport
import ResendGateTestSupport
import Testing

/// A Redis whose `maxmemory-policy` may evict keys drops cooldowns when it is full (the
/// volatile policies exactly the keys with a TTL): a second code sent at once. The gate
/// reads the policy (`INFO memory`) at connect and every `evictionCheckInterval`, and
/// refuses such a Redis: sends 503 `store_evicts_keys`, `/readyz` 503 saying why,
/// `resendgate_redis_evicting` above 0; unless `allowEvictingRedis`.
@Suite("An evicting Redis is refused", .ownThread)
struct EvictingRedisTests {
    static let evictingPolicies = [
        "volatile-lru", "allkeys-lru", "volatile-ttl", "allkeys-random", "volatile-random", "volatile-lfu", "allkeys-lfu",
    ]

    /// A gate of 2 workers on a Redis started with `policy`.
    static func gate(
        policy: String, allow: Bool = false, checkEvery interval: Duration = .seconds(5), redisLines: [String] = [],
        url: ((RedisServer) -> String)? = nil, workers: Int = 2
    ) throws -> TestGate {
        let lines = ["maxmemory-policy \(policy)"] + redisLines
        return try TestGate(redis: RedisServer.Options(extraConfiguration: lines), waitUntilReady: false) { redis in
            var redisConfiguration = try RedisConfiguration(
                url: url?(redis) ?? redis.url, connectTimeout: .seconds(5), commandTimeout: .seconds(5))
            redisConfiguration.allowEvictingRedis = allow
            redisConfiguration.evictionCheckInterval = interval
            let gate = try GateConfiguration(
                redis: redisConfiguration, policies: RunningGate.withTestPurposes(PolicySet(fallback: Policy(ladder: [.seconds(60)]))),
                defaultRegion: "CN")
            return (try ServerConfiguration(host: "127.0.0.1", port: 0, workers: workers, logLevel: .off), gate)
        }
    }

    /// Polls `/readyz` until it answers `code` (`nil`: 200); returns the last answer.
    static func readiness(_ gate: TestGate, until code: String?) throws -> RawHTTPResponse {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let response = try gate.client().get("/readyz")
            let answered = response.status == 200 ? nil : (try? response.decode(ErrorBody.self))?.error.code
            if answered == code || ContinuousClock.now > deadline { return response }
            usleep(20_000)
        }
    }

    static func evictingGauge(_ gate: TestGate) throws -> Double? {
        try PrometheusSamples(gate.client().get("/metrics").text).value("resendgate_redis_evicting", "")
    }

    @Test(arguments: evictingPolicies)
    func refusesAnEvictingPolicy(_ policy: String) throws {
        let gate = try Self.gate(policy: policy)
        defer { gate.stop() }
        // Sends made while the workers connect (before the policy is read) are never allowed.
        for _ in 0..<5 {
            let early = try gate.client().send(phone: "+8613800138009")
            #expect(early.status == 503, "\(early)")
        }
        let ready = try Self.readiness(gate, until: "store_evicts_keys")
        #expect(ready.status == 503, "\(ready)")
        let readiness = try ready.decode(ErrorBody.self).error
        #expect(readiness.code == "store_evicts_keys")
        #expect(readiness.message.contains("maxmemory-policy \(policy)"), "\(readiness.message)")
        for phone in ["+8613800138000", "+8613800138001"] {
            let send = try gate.client().send(phone: phone)
            #expect(send.status == 503, "\(send)")
            #expect(try send.decode(ErrorBody.self).error.code == "store_evicts_keys")
        }
        // A peek is refused too, and nothing reached Redis.
        #expect(try gate.client().get("/v1/cooldowns/%2B8613800138000").status == 503)
        let keys = try gate.redis.client().command("KEYS", "*")
        #expect(keys == .array([]), "\(keys)")
        #expect(try Self.evictingGauge(gate) == 2)
    }

    /// A Redis that will not say (`INFO` renamed away) cannot show that it keeps keys.
    @Test func refusesARedisThatHidesItsPolicy() throws {
        // The gate's user may not run INFO (the test support's default user may).
        let gate = try Self.gate(
            policy: "noeviction", redisLines: ["user gate on >gate-secret ~* &* +@all -info"],
            url: { "redis://gate:gate-secret@127.0.0.1:\($0.port)/0" })
        defer { gate.stop() }
        let ready = try Self.readiness(gate, until: "store_evicts_keys")
        #expect(ready.status == 503 && ready.text.contains("unknown (INFO memory refused"), "\(ready)")
        let send = try gate.client().send(phone: "+8613800138000")
        #expect(send.status == 503 && send.text.contains("store_evicts_keys"), "\(send)")
    }

    @Test func servesNoeviction() throws {
        let gate = try Self.gate(policy: "noeviction")
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        #expect(try gate.client().send(phone: "+8613800138000").status == 429)
        #expect(try Self.evictingGauge(gate) == 0)
    }

    /// `--allow-evicting-redis`: served, counted in the gauge.
    @Test func theOptInServesAnEvictingRedis() throws {
        let gate = try Self.gate(policy: "volatile-lru", allow: true)
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        #expect(try gate.client().send(phone: "+8613800138000").status == 429)
        #expect(try Self.evictingGauge(gate) == 2)
    }

    /// A `CONFIG SET` while the gate runs is noticed within the check interval, both ways,
    /// with no reconnect. One worker: `/readyz` speaks for it, and the sends reach it.
    @Test func noticesALiveChangeWithoutARestart() throws {
        let gate = try Self.gate(policy: "noeviction", checkEvery: .milliseconds(100), workers: 1)
        defer { gate.stop() }
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        #expect(try gate.client().send(phone: "+8613800138000").status == 200)
        let redis = try gate.redis.client()
        #expect(try redis.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru") == .simpleString("OK"))
        let refused = try Self.readiness(gate, until: "store_evicts_keys")
        #expect(refused.status == 503 && refused.text.contains("allkeys-lru"), "\(refused)")
        for _ in 0..<4 {
            let send = try gate.client().send(phone: "+8613800138001")
            #expect(send.status == 503 && send.text.contains("store_evicts_keys"), "\(send)")
        }
        #expect(try redis.command("CONFIG", "SET", "maxmemory-policy", "noeviction") == .simpleString("OK"))
        #expect(try gate.poll("/readyz", until: 200).status == 200)
        #expect(try gate.client().send(phone: "+8613800138001").status == 200)
        #expect(try Self.evictingGauge(gate) == 0)
        let reconnects = try PrometheusSamples(gate.client().get("/metrics").text).value("resendgate_redis_reconnects_total", "")
        #expect(reconnects == 0)
    }

    /// The double send itself: a full Redis under `volatile-ttl` evicts the running cooldown
    /// (the key with the shortest TTL) as other keys are written, and the same number is
    /// allowed again at once. With the opt-in that happens (the scenario is real); without
    /// it neither send is allowed.
    @Test(arguments: [true, false])
    func aFullEvictingRedisDoubleSendsOnlyWithTheOptIn(allow: Bool) throws {
        let gate = try Self.gate(policy: "volatile-ttl", allow: allow)
        defer { gate.stop() }
        #expect(try Self.readiness(gate, until: allow ? nil : "store_evicts_keys").status == (allow ? 200 : 503))
        let phone = "+8613800138000"
        var allowed = 0
        let first = try gate.client().send(phone: phone)
        if first.status == 200 { allowed += 1 }
        let redis = try gate.redis.client()
        let used = try #require(try Self.usedMemory(redis))
        _ = try redis.command("CONFIG", "SET", "maxmemory", "\(used + 256 * 1024)")
        let filler = String(repeating: "x", count: 8 * 1024)
        for index in 0..<2_000 {
            _ = try redis.command("SET", "filler:\(index)", filler, "EX", "3600")
            if try redis.command("KEYS", "rg:*cooldown*").array?.isEmpty ?? true, index > 10 { break }
        }
        #expect(try redis.command("KEYS", "rg:*cooldown*").array?.isEmpty == true, "the cooldown was never evicted")
        let second = try gate.client().send(phone: phone)
        if second.status == 200 { allowed += 1 }
        if allow {
            #expect(allowed == 2, "the double send was not reproduced: \(first) \(second)")
        } else {
            #expect(allowed == 0)
            #expect(first.status == 503 && second.status == 503, "\(first) \(second)")
            #expect(try second.decode(ErrorBody.self).error.code == "store_evicts_keys")
        }
    }

    static func usedMemory(_ redis: RedisTestClient) throws -> Int? {
        guard let info = try redis.command("INFO", "memory").string else { return nil }
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
        return line.flatMap { Int($0.dropFirst("used_memory:".count)) }
    }
}
