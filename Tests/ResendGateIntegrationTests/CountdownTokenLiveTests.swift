import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Countdown tokens need no key of their own: they name their cooldown, and are live
/// exactly while its key holds their nonce. Against a real Redis.
@Suite("Countdown tokens against a real Redis: staleness, a shared secret, rotation, refused writes", .ownThread)
struct CountdownTokenLiveTests {
    static func gate(_ redis: RedisServer, policy: Policy = .default, tokenSecret: String? = nil) throws -> Gate {
        let configuration = try RedisConfiguration(url: redis.url, connectTimeout: .seconds(1), commandTimeout: .seconds(1))
        return Gate(configuration: try GateConfiguration(
            redis: configuration, policies: PolicySet(fallback: policy), defaultRegion: "CN", tokenSecret: tokenSecret))
    }

    /// With the default policy (plain commands) and with a ladder (the reserve script).
    @Test(arguments: [Policy.default, Policy(ladder: [.seconds(60), .seconds(120)], maxSends: 5)])
    func aTokenGoesStaleWhenItsCooldownIsReleasedOrReplaced(policy: Policy) async throws {
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let first = try await gate.reserve(phone: number)
            let token = try #require(first.countdownToken)
            #expect(try await gate.countdown(token) != nil)
            let denied = try await gate.reserve(phone: number)
            #expect(!denied.allowed && denied.countdownToken == token)
            #expect(try await gate.release(phone: number))
            #expect(try await gate.countdown(token) == nil)
            // The next cooldown of the number has another token; the old one stays stale.
            let next = try #require(try await gate.reserve(phone: number).countdownToken)
            #expect(next != token)
            #expect(try await gate.countdown(token) == nil)
            #expect(try await gate.countdown(next) != nil)
            // Replaced behind the token's back: the key holds another value.
            _ = try redis.client().command("SET", cooldownKey(), "CCCCCCCCCCCCCCCC", "PX", "60000")
            #expect(try await gate.countdown(next) == nil)
            #expect(try redis.client().keys("rg:countdown:*").isEmpty)
        }
    }

    /// Two gates that start together on an empty Redis agree on one secret (SET NX: the
    /// first wins) and read each other's tokens.
    @Test func twoGatesRacingToCreateTheSecretShareOne() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        for round in 0..<5 {
            _ = try redis.client().command("FLUSHALL")
            let (a, b) = (try Self.gate(redis), try Self.gate(redis))
            async let fromA = a.reserve(phone: "+86138001380\(round)1")
            async let fromB = b.reserve(phone: "+86138001380\(round)2")
            let (tokenA, tokenB) = (try #require(try await fromA.countdownToken), try #require(try await fromB.countdownToken))
            #expect(try redis.client().keys(tokenSecretKey) == [tokenSecretKey])
            #expect(try await a.countdown(tokenB) != nil, "round \(round)")
            #expect(try await b.countdown(tokenA) != nil, "round \(round)")
            // A third gate, started later, reads the same secret.
            #expect(try await Self.gate(redis).countdown(tokenA) != nil)
        }
    }

    /// A secret given to every gate: Redis keeps none, and a new one ends every
    /// outstanding token's lookups (404), nothing else.
    @Test func rotatingAGivenSecretEndsOutstandingTokensOnly() async throws {
        let redis = try await startRedis()
        defer { redis.stop() }
        let old = try Self.gate(redis, tokenSecret: "the first secret of the deployment")
        let decision = try await old.reserve(phone: number)
        let token = try #require(decision.countdownToken)
        #expect(try await Self.gate(redis, tokenSecret: "the first secret of the deployment").countdown(token) != nil)
        #expect(try redis.client().keys(tokenSecretKey).isEmpty)
        let rotated = try Self.gate(redis, tokenSecret: "the second secret, after rotation")
        #expect(try await rotated.countdown(token) == nil)
        // The cooldown itself runs on: the number is still refused, with a token that works.
        let again = try await rotated.reserve(phone: number)
        #expect(!again.allowed && again.reason == .cooldown)
        #expect(try await rotated.countdown(try #require(again.countdownToken)) != nil)
        // A secret in Redis of the same deployment is another secret: its gates refuse it too.
        #expect(try await Self.gate(redis).countdown(token) == nil)
    }

    /// Redis that cannot record a send (out of memory under noeviction) never lets one
    /// through unrecorded. The plain commands of the default policy are refused by Redis
    /// (store unavailable); a script's writes may pass Redis's memory check (Redis 7.0 lets
    /// an unflagged script write), and then what it allowed is recorded.
    @Test(arguments: [true, false])
    func aRedisThatRefusesWritesNeverAllowsAnUnrecordedSend(plainPolicy: Bool) async throws {
        let policy = plainPolicy ? Policy.default : Policy(ladder: [.seconds(60), .seconds(120)])
        try await withLiveGate(policy: policy) { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)  // the secret is known now
            let client = try redis.client()
            _ = try client.command("CONFIG", "SET", "maxmemory-policy", "noeviction")
            _ = try client.command("CONFIG", "SET", "maxmemory", "1")
            var allowed = 0
            for index in 0..<20 {
                let phone = "+86138\(20_000_000 + index)"
                let outcome: Result<Decision, GateError>
                do throws(GateError) { outcome = .success(try await gate.reserve(phone: phone)) } catch { outcome = .failure(error) }
                let recorded = try client.command("EXISTS", cooldownKey(phone)).integer == 1
                switch outcome {
                case .success(let decision):
                    if decision.allowed { allowed += 1 }
                    #expect(decision.allowed == recorded, "send \(index): \(decision)")
                case .failure(let error):
                    #expect(error.code == "store_unavailable", "send \(index): \(error)")
                    #expect(!recorded)
                }
            }
            if plainPolicy { #expect(allowed == 0) }
            _ = try client.command("CONFIG", "SET", "maxmemory", "0")
        }
    }
}
