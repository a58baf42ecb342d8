import Countdown
import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36: a limit written as data is decided by two code paths that must agree: inside
/// the number's one script on one Redis (`guard-check.lua`, `guard-count.lua`) and a step of
/// its own on a cluster (`SendBudgets`, `budget-take.lua`). Generated policies and runs of
/// sends (numbers, client IPs, refunds), one step at a time, must answer the same.
extension GateClusterTests {
    @Test func limitsAnswerTheSameOnOneRedisAndOnACluster() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let redis = try await startRedis()
        defer { redis.stop() }
        var generator = SplitMix64(seed: 36)
        let pers = SendLimit.Per.allCases
        var allowed = 0, refusedByALimit = 0, observedOnes = 0
        for run in 0..<3 {
            var policy = Policy(ladder: [.seconds(60)], maxRefunds: 1_000)
            policy.limits = (0..<Int.random(in: 2...5, using: &generator)).map { index in
                let per = pers.randomElement(using: &generator)!
                return SendLimit(
                    name: "l\(run)-\(index)", per: per, budget: SendBudget(limit: Int.random(in: 1...6, using: &generator), window: .seconds(3600)),
                    observe: Int.random(in: 0..<5, using: &generator) == 0)
            }
            let single = try makeGate(url: redis.url, policy: policy)
            let clustered = try await Self.servedGate(cluster: cluster, policy: policy)
            let numbers = Self.spreadNumbers(4).map { $0.replacingOccurrences(of: "+86139", with: "+8613\(7 + run)") }
            let addresses = [nil, "203.0.113.1", "203.0.113.2", "2001:db8::\(run)"]
            for step in 0..<40 {
                let number = numbers.randomElement(using: &generator)!
                let address = addresses.randomElement(using: &generator)!
                let purpose = "default"
                if Int.random(in: 0..<3, using: &generator) == 0 {
                    let released = try await single.release(phone: number, purpose: purpose)
                    #expect(try await clustered.release(phone: number, purpose: purpose) == released, "run \(run) step \(step)")
                    continue
                }
                let one = try await single.reserve(phone: number, purpose: purpose, clientIP: address)
                let other = try await clustered.reserve(phone: number, purpose: purpose, clientIP: address)
                #expect(one.allowed == other.allowed && one.reason == other.reason && one.observed == other.observed,
                        "run \(run) step \(step) \(policy.limits.map(\.text)): one Redis \(one), cluster \(other)")
                #expect(one.budgetLimit == other.budgetLimit, "run \(run) step \(step)")
                if one.allowed { allowed += 1 }
                if one.budgetLimit != nil { refusedByALimit += 1 }
                observedOnes += one.observed.count
            }
        }
        // The runs reached both answers, and the limits refused and observed some sends.
        #expect(allowed > 10 && refusedByALimit > 10 && observedOnes > 0, "\(allowed) \(refusedByALimit) \(observedOnes)")
    }
}
