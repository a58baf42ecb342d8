import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// A master that may evict keys is refused behind Sentinels and on a Redis Cluster: its
/// `maxmemory-policy` is read on the master (never on a Sentinel, which has none) and on
/// every master of a cluster, at connect and every `evictionCheckInterval` (100 ms here).
@Suite("Gate: an evicting master behind Sentinels or in a Cluster", .serialized, .ownThread)
struct GateEvictionTests {
    static func base() throws -> RedisConfiguration {
        var base = try RedisConfiguration(url: RedisConfiguration.defaultURL, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        base.evictionCheckInterval = .milliseconds(100)
        return base
    }

    /// The error `body` throws, polled until it is `code` (nil: no error) or 10 s passed.
    static func poll(until code: String?, _ body: () async throws(GateError) -> Void) async throws -> String? {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            var answered: String?
            do { try await body() } catch { answered = error.code }
            if answered == code || ContinuousClock.now > deadline { return answered }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test func aClusterMasterThatEvictsIsRefusedAndOnlyIt() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let seeds = try RedisConfiguration.HostPort.parseList(cluster.seedList, field: "redis-cluster")
        let gate = Gate(configuration: try GateConfiguration(
            redis: try .cluster(seeds: seeds, base: try Self.base()), defaultRegion: "CN"))
        let numbers = GateClusterTests.spreadNumbers(30)
        let masterOf = { (number: String) throws -> Int in
            try cluster.masterPort(forSlot: cluster.slot(forKey: "{default:\(number)}"))
        }
        let evicting = try masterOf(numbers[0])
        let here = try #require(numbers.first { try masterOf($0) == evicting && $0 != numbers[0] })
        let elsewhere = try #require(numbers.first { try masterOf($0) != evicting })
        // A send first: the gate reads its token secret (a key of its own, which may live on the
        // master made to evict below) before that master evicts. Else, on a slow run, the
        // secret's read is refused too and every send fails, whichever master holds its number.
        _ = try await GateClusterTests.whenServed(within: .seconds(10)) { () async throws(GateError) in
            try await gate.reserve(phone: numbers[0])
        }
        let client = try cluster.client(port: evicting)
        #expect(try client.command("CONFIG", "SET", "maxmemory-policy", "volatile-lru") == .simpleString("OK"))
        #expect(try await Self.poll(until: "store_evicts_keys") { () async throws(GateError) in
            _ = try await gate.reserve(phone: here)
        } == "store_evicts_keys")
        #expect(try await gate.reserve(phone: elsewhere).allowed, "a master that keeps its keys still decides its numbers")
        #expect(try client.command("CONFIG", "SET", "maxmemory-policy", "noeviction") == .simpleString("OK"))
        #expect(try await Self.poll(until: nil) { () async throws(GateError) in
            _ = try await gate.reserve(phone: here)
        } == nil)
    }

    @Test func theSentinelsMasterThatEvictsIsRefused() async throws {
        let sentinels = try RedisSentinelSet()
        defer { sentinels.stop() }
        let master = try sentinels.client(port: sentinels.masterPort)
        #expect(try master.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru") == .simpleString("OK"))
        let gate = Gate(configuration: try GateConfiguration(
            redis: .sentinel(
                sentinels: try RedisConfiguration.HostPort.parseList(sentinels.sentinelList, field: "redis-sentinel"),
                master: sentinels.masterName, base: try Self.base()),
            defaultRegion: "CN"))
        let refused = try await Self.poll(until: "store_evicts_keys") { () async throws(GateError) in
            _ = try await gate.reserve(phone: "+8613800138000")
        }
        #expect(refused == "store_evicts_keys")
        #expect(try master.command("CONFIG", "SET", "maxmemory-policy", "noeviction") == .simpleString("OK"))
        #expect(try await Self.poll(until: nil) { () async throws(GateError) in
            _ = try await gate.reserve(phone: "+8613800138000")
        } == nil)
    }

    /// The command line too: exit 1 naming the policy; `--allow-evicting-redis` sends.
    @Test func theCommandLineRefusesUnlessAllowed() async throws {
        let redis = try await startRedis(RedisServer.Options(extraConfiguration: ["maxmemory-policy volatile-lru"]))
        defer { redis.stop() }
        let executable = try BuiltProducts.executable(named: "resendgate")
        let send = ["send", "+8613800138000", "--redis", redis.url]
        let refused = try await offThePool { try CommandRunner.run(executable, send, timeout: .seconds(20)) }
        #expect(refused.status == .exited(1) && refused.stderr.contains("may evict keys (maxmemory-policy volatile-lru)"), "\(refused)")
        let allowed = try await offThePool {
            try CommandRunner.run(executable, send + ["--allow-evicting-redis"], timeout: .seconds(20))
        }
        #expect(allowed.status == .exited(0), "\(allowed)")
    }
}
