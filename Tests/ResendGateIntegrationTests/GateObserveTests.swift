import Foundation
import GateRuntime
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 5 for the number's own rules: `cooldown`, `max_sends` and `ip_limit` in
/// observe mode on one real Redis. An observed rule that would refuse lets the send through
/// and is reported in `observed`; every other rule still decides. Windows are minutes long;
/// time moves with `advanceTime`, never by sleeping.
@Suite("Gate: observe mode for the cooldown, max sends and the IP's cap")
struct GateObserveTests {
    static func policy(_ observe: Set<Decision.Reason>, configure: (inout Policy) -> Void = { _ in }) -> Policy {
        var policy = Policy(ladder: [.seconds(60)])
        configure(&policy)
        policy.observe = observe
        return policy
    }

    @Test func anObservedCooldownLetsTheSendThroughWithANewCooldown() async throws {
        // A flat cooldown that counts nothing: without observe mode it is one plain SET NX.
        try await withLiveGate(policy: Self.policy([.cooldown])) { redis, gate async throws in
            let client = try redis.client()
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed && first.observed.isEmpty)
            let firstValue = try client.command("GET", cooldownKey())
            // At once, many times, and at once from many tasks: every send goes through, reported.
            var tokens: Set<CountdownToken> = [try #require(first.countdownToken)]
            var newest = first
            var newestGranted = StallWatch.mark()
            for _ in 0..<5 {
                newestGranted = StallWatch.mark()
                let again = try await gate.reserve(phone: number)
                #expect(again.allowed && again.reason == nil && again.observed == [.cooldown], "\(again)")
                #expect(again.retryAfterMilliseconds == 60_000)
                tokens.insert(try #require(again.countdownToken))
                newest = again
            }
            #expect(tokens.count == 6, "each send starts a cooldown of its own")
            let value = try client.command("GET", cooldownKey())
            #expect(value != firstValue)
            let pttl = try #require(try client.pttl(cooldownKey()))
            // What remains by the time passed since the newest send (a frozen test process
            // reads it late; Redis counts on).
            expectRemaining(Int64(pttl), since: newestGranted)
            // The newest send's token follows the running cooldown; the first one's was replaced.
            let reading = try await gate.countdown(try #require(newest.countdownToken))
            #expect(reading != nil, "the newest token reads")
            if let reading { expectRemaining(reading.retryAfterMilliseconds, since: newestGranted) }
            #expect(try await gate.countdown(try #require(first.countdownToken)) == nil)
            // A peek still reports the cooldown that runs.
            #expect(try await gate.peek(phone: number).active)
        }
    }

    @Test func aLockStillRefusesWhenTheCooldownIsObserved() async throws {
        let policy = Self.policy([.cooldown]) { $0.maxFailedChecks = 2; $0.lockout = .seconds(600); $0.lockoutScope = .number }
        try await withLiveGate(policy: policy) { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            _ = try await gate.verify(phone: number, outcome: .failed)
            _ = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            #expect(try redis.client().command("GET", cooldownKey()) == .bulkString("locked"))
            for _ in 0..<3 {
                let send = try await gate.reserve(phone: number)
                #expect(!send.allowed && send.reason == .locked, "\(send)")
                #expect(send.retryAfterMilliseconds > 590_000)
            }
            #expect(try redis.client().command("GET", cooldownKey()) == .bulkString("locked"))
        }
    }

    @Test func anObservedMaxSendsLetsSendsPastItWhileTheCooldownStillRefuses() async throws {
        let policy = Self.policy([.maxSends]) { $0.maxSends = 2; $0.window = .seconds(3600) }
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed && first.observed.isEmpty && first.sendsLeft == 1)
            try client.runOut(cooldownKey())
            // The send that fills the window waits only for its step: the next is observed, not refused.
            let second = try await gate.reserve(phone: number)
            #expect(second.allowed && second.observed.isEmpty && second.sendsLeft == 0)
            #expect(second.retryAfterMilliseconds == 60_000, "\(second)")
            // The cooldown is not observed: it still refuses, and reports max_sends observed.
            let early = try await gate.reserve(phone: number)
            #expect(!early.allowed && early.reason == .cooldown && early.observed == [.maxSends], "\(early)")
            // The second send's cooldown, by Redis's clock (not by how long the test took).
            let left = second.serverTimeMilliseconds + 60_000 - early.serverTimeMilliseconds
            #expect(abs(early.retryAfterMilliseconds - left) <= 2 && left > 0, "\(early) vs \(left)")
            try client.runOut(cooldownKey())
            for sends in 3...5 {
                let past = try await gate.reserve(phone: number)
                #expect(past.allowed && past.observed == [.maxSends], "\(past)")
                #expect(past.sendsInWindow == sends && past.sendsLeft == 0)
                #expect(past.retryAfterMilliseconds == 60_000)
                try client.runOut(cooldownKey())
            }
            #expect(try client.windowSends(windowKey()).count == 5)
        }
    }

    @Test func anObservedIPCapLetsSendsThroughAndKeepsTheIPsSetAtTheCap() async throws {
        let policy = Self.policy([.ipLimit]) { $0.ipMaxSends = 3; $0.ipWindow = .seconds(3600) }
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            let numbers = (0..<30).map { "+86138\(String(format: "%08d", 40_000_000 + $0))" }
            let decisions = try await withThrowingTaskGroup(of: Decision.self) { group in
                for phone in numbers { group.addTask { try await gate.reserve(phone: phone, clientIP: "203.0.113.9") } }
                return try await group.reduce(into: [Decision]()) { $0.append($1) }
            }
            #expect(decisions.allSatisfy { $0.allowed && $0.retryAfterMilliseconds == 60_000 })
            #expect(decisions.filter(\.observed.isEmpty).count == 3)
            #expect(decisions.filter { $0.observed == [.ipLimit] }.count == 27)
            #expect(try client.command("ZCARD", ipSendsKey("203.0.113.9")) == .integer(3))
            // A number's own cooldown still refuses, and reports the cap observed.
            let repeat_ = try await gate.reserve(phone: numbers[0], clientIP: "203.0.113.9")
            #expect(!repeat_.allowed && repeat_.reason == .cooldown && repeat_.observed == [.ipLimit])
            // Once the window passes, the IP's sends count from nothing again.
            try client.advanceTime(byMilliseconds: 3_600_001)
            let later = try await gate.reserve(phone: "+8613900139000", clientIP: "203.0.113.9")
            #expect(later.allowed && later.observed.isEmpty)
            #expect(try client.command("ZCARD", ipSendsKey("203.0.113.9")) == .integer(1))
        }
    }

    @Test func aReplayCarriesTheObservedRules() async throws {
        let policy = Self.policy([.cooldown, .maxSends]) { $0.maxSends = 1; $0.window = .seconds(3600) }
        try await withLiveGate(policy: policy) { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            let observed = try await gate.reserve(phone: number, idempotencyKey: "observe-1")
            #expect(observed.allowed && observed.observed == [.cooldown, .maxSends], "\(observed)")
            let replay = try await gate.reserve(phone: number, idempotencyKey: "observe-1")
            #expect(replay.replayed && replay.allowed && replay.observed == observed.observed)
            #expect(replay.countdownToken == observed.countdownToken)
            #expect(replay.retryAfterMilliseconds == observed.retryAfterMilliseconds)
            #expect(replay.sendsInWindow == observed.sendsInWindow)
            // A record an older version wrote (no observed field) still replays, observing nothing.
            let client = try redis.client()
            let old = testKeys.idempotencyRecord(idempotencyKey: "old-1")
            _ = try client.command("SET", old, "1  60000 1 60000 1764620000000 AAAAAAAAAAAAAAAA \(number)|default|", "PX", "60000")
            let oldReplay = try await gate.reserve(phone: number, idempotencyKey: "old-1")
            #expect(oldReplay.replayed && oldReplay.allowed && oldReplay.observed.isEmpty, "\(oldReplay)")
            #expect(oldReplay.retryAfterMilliseconds == 60_000)
            let reused = await gateError { () async throws(GateError) in
                try await gate.reserve(phone: "+8613800138009", idempotencyKey: "old-1")
            }
            #expect(reused == .idempotencyKeyReused)
        }
    }

    @Test func lockedCannotBeObserved() throws {
        var policy = Policy.default
        policy.observe = [.locked, .cooldown]
        let refused = try #require(configurationError { () throws(ConfigurationError) in try policy.lint(where: "purposes.login.") })
        #expect(refused.field == "purposes.login.observe")
        #expect(refused.message.contains("\"locked\""))
        policy.observe = [.cooldown, .maxSends, .ipLimit, .countryLimit, .globalLimit, .suspectedPumping]
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint() } == nil)
    }

    func configurationError(_ body: () throws(ConfigurationError) -> Void) -> ConfigurationError? {
        do { try body() } catch { return error }
        return nil
    }
}
