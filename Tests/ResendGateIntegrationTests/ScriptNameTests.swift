@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The gate calls its scripts by `EVALSHA` with the name `SHA1` gives them: a real
/// Redis must give every script the same name when it loads it.
@Suite("Script names agree with Redis", .ownThread)
struct ScriptNameTests {
    @Test func redisNamesEveryGateScriptAsTheGateDoes() async throws {
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        #expect(GateScripts.all.count > 1)
        for script in GateScripts.all {
            #expect(try client.command("SCRIPT", "LOAD", script.source).string == script.sha1)
        }
    }

    /// Every policy's reserve script compiles in Redis and has the name the gate calls:
    /// policies with and without a window, an IP cap, observed rules, one step or many.
    @Test func everyPolicysReserveScriptLoadsUnderItsName() async throws {
        let redis = try await startRedis(RedisServer.Options())
        defer { redis.stop() }
        let client = try redis.client()
        var observing = Policy(ladder: [.seconds(60), .seconds(120)], maxSends: 3, ipMaxSends: 10)
        observing.observe = [.cooldown, .maxSends, .ipLimit]
        let policies = [
            Policy.default, Policy(ladder: [.seconds(60)], ipMaxSends: 5), Policy(ladder: [.seconds(1), .seconds(2), .seconds(3)]),
            Policy(ladder: [.seconds(60)], maxSends: 1, ipMaxSends: 1, ipWindow: .seconds(86_400)), observing,
            // The longest ladder a policy takes (Policy.lint), each step written into the script.
            Policy(ladder: (1...Policy.maxLadderSteps).map { .seconds($0 * 1000) }, window: .seconds(86_400 * 365)),
        ]
        for policy in policies {
            let scripts = ReserveScripts(
                policy: CompiledPolicy(policy), idempotencyLifetimeMilliseconds: 1, longestIPWindowMilliseconds: 86_400_000)
            for script in scripts.all {
                #expect(try client.command("SCRIPT", "LOAD", script.source).string == script.sha1, "\(policy)")
            }
        }
    }
}
