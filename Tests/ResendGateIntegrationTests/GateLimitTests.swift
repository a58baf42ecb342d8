import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36, item 1: counted limits written as data (`SendLimit`, `--limit`, a policy
/// file's `limits`), counted by the budgets' machinery, on one real Redis. Each test
/// tries to get around its limit through the public API: at once, by refunds, by
/// retries, by other spellings of one address.
@Suite("Gate: counted limits written as data")
struct GateLimitTests {
    static func policy(_ limits: String, ladder: [Duration] = [.seconds(60)], maxRefunds: Int = 1) throws -> Policy {
        var policy = Policy(ladder: ladder, maxRefunds: maxRefunds)
        policy.limits = try SendLimit.parseList(limits)
        return policy
    }

    @Test func aPerPurposeDailyCapHoldsUnderConcurrentSendsAndCountsEachPurposeApart() async throws {
        let policy = try Self.policy("purpose-day,per=purpose,sends=5/24h")
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let login = try await GateBudgetTests.reserveConcurrently(gate, GateBudgetTests.chineseNumbers(20), purpose: "login")
            #expect(login.filter(\.allowed).count == 5)
            for refused in login where !refused.allowed {
                #expect(refused.reason == .globalLimit)
                #expect(refused.retryAfterMilliseconds > 86_000_000 && refused.retryAfterMilliseconds <= 86_400_000)
            }
            // Another purpose has a count of its own.
            let signup = try await GateBudgetTests.reserveConcurrently(gate, GateBudgetTests.chineseNumbers(8, from: 100), purpose: "signup")
            #expect(signup.filter(\.allowed).count == 5)
            let client = try redis.client()
            #expect(try await GateBudgetTests.counted(client, "rg:budget:{*:purpose-day.login:*}", settlingAt: 5) == 5)
            #expect(try GateBudgetTests.counted(client, "rg:budget:{*:purpose-day.signup:*}") == 5)
        }
    }

    @Test func aPerIPAndNumberLimitHoldsThroughRefundsAndLeavesOtherPairsAlone() async throws {
        let policy = try Self.policy("ip-number,per=ip+number,sends=2/1h", maxRefunds: 100)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let number = "+8613800138000", ip = "203.0.113.7"
            // Send and refund, again and again: a refund gives the cooldown back, not the limit's count.
            var allowed = 0
            for _ in 0..<6 {
                let decision = try await gate.reserve(phone: number, clientIP: ip)
                if decision.allowed {
                    allowed += 1
                } else {
                    #expect(decision.reason == .ipLimit && decision.retryAfterMilliseconds > 3_590_000)
                    #expect(decision.budgetLimit == 2)
                }
                _ = try await gate.release(phone: number)
            }
            #expect(allowed == 2)
            // The same IP for another number, and another IP (also at once) for this one.
            #expect(try await gate.reserve(phone: "+8613800138001", clientIP: ip).allowed)
            #expect(try await gate.reserve(phone: number, clientIP: "198.51.100.7").allowed)
            // A request without a client address is not counted by a limit per IP.
            _ = try await gate.release(phone: number)
            #expect(try await gate.reserve(phone: number).allowed)
            // One key per pair, holding its allowed sends; neither the IP nor the number in clear.
            let keys = try redis.client().keys("rg:budget:*")
            #expect(keys.count == 3)
            #expect(!keys.contains { $0.contains(ip) || $0.contains("8613800138000") })
        }
    }

    @Test func aPerIPLimitCountsEverySpellingOfOneAddressAndEachSlash64Once() async throws {
        let policy = try Self.policy("ip-hour,per=ip,sends=3/1h")
        try await withLiveGate(policy: policy) { _, gate async throws in
            let numbers = GateBudgetTests.chineseNumbers(5)
            #expect(try await gate.reserve(phone: numbers[0], clientIP: "192.0.2.1").allowed)
            #expect(try await gate.reserve(phone: numbers[1], clientIP: "::ffff:192.0.2.1").allowed)
            #expect(try await gate.reserve(phone: numbers[2], clientIP: "64:ff9b::c000:201").allowed)
            #expect(try await gate.reserve(phone: numbers[3], clientIP: "192.0.2.1").reason == .ipLimit)
            // An IPv6 /64 is one address.
            #expect(try await gate.reserve(phone: numbers[0], clientIP: "2001:db8::1").reason == .cooldown)
            #expect(try await gate.reserve(phone: numbers[3], clientIP: "2001:db8::1").allowed)
            #expect(try await gate.reserve(phone: numbers[4], clientIP: "2001:db8::2").allowed)
        }
    }

    @Test func retriesWithOneIdempotencyKeyCountOnce() async throws {
        let policy = try Self.policy("all-hour,per=all,sends=2/1h")
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let numbers = GateBudgetTests.chineseNumbers(3)
            for _ in 0..<5 { #expect(try await gate.reserve(phone: numbers[0], idempotencyKey: "k1").allowed) }
            #expect(try await gate.reserve(phone: numbers[1]).allowed)
            #expect(try await gate.reserve(phone: numbers[2]).reason == .globalLimit)
            #expect(try await GateBudgetTests.counted(try redis.client(), "rg:budget:{*:all-hour.:*}", settlingAt: 2) == 2)
        }
    }

    @Test func anObservedLimitReportsAndLetsSendsThrough() async throws {
        let policy = try Self.policy("region-hour,per=region,sends=1/1h,observe;purpose-cap,per=purpose,sends=2/1h,reason=max_sends")
        try await withLiveGate(policy: policy) { _, gate async throws in
            let numbers = GateBudgetTests.chineseNumbers(3)
            #expect(try await gate.reserve(phone: numbers[0]).observed == [])
            let second = try await gate.reserve(phone: numbers[1])
            #expect(second.allowed && second.observed == [.countryLimit])
            // The other limit is enforced, with the reason it names.
            let third = try await gate.reserve(phone: numbers[2])
            #expect(!third.allowed && third.reason == .maxSends && third.observed == [.countryLimit])
        }
    }

    @Test func fourLimitsAndTheBudgetsCountTogetherInOneCall() async throws {
        // Beyond three shares the script keeps them in a table (guard-check.lua): every one counts.
        var policy = try Self.policy(
            "a,per=all,sends=10/1h;b,per=purpose,sends=10/1h;c,per=number,sends=10/1h;d,per=calling-code,sends=3/1h")
        policy.countryMaxSends = ["CN": SendBudget(limit: 10, window: .seconds(3600))]
        policy.maxSendsTotal = SendBudget(limit: 10, window: .seconds(3600))
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let decisions = try await GateBudgetTests.reserveConcurrently(gate, GateBudgetTests.chineseNumbers(6))
            #expect(decisions.filter(\.allowed).count == 3)
            #expect(decisions.filter { !$0.allowed }.allSatisfy { $0.reason == .countryLimit })
            let client = try redis.client()
            for kind in ["CN", "total", "a.", "b.default", "d.+86"] {
                #expect(try GateBudgetTests.counted(client, "rg:budget:{*:\(kind):*") == 3, "\(kind)")
            }
            #expect(try GateBudgetTests.counted(client, "rg:budget:{*:c.*") == 3)
        }
    }
}
