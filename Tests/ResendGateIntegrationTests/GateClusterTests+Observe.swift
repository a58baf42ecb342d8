import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 5 on a Redis Cluster (part of `GateClusterTests`, so it runs serialized
/// with it): the IP's cap is taken in its own slot before the number's step; observed, a
/// full cap takes no share, reports `ip_limit`, and the number decides alone.
extension GateClusterTests {
    @Test func anObservedIPCapAcrossSlotsReportsAndKeepsTheIPsSetAtTheCap() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        var policy = Policy(ipMaxSends: 2, ipWindow: .seconds(3600))
        policy.observe = [.ipLimit]
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        let numbers = Self.spreadNumbers(12)
        let decisions = try await withThrowingTaskGroup(of: Decision.self) { group in
            for phone in numbers[0..<10] { group.addTask { try await gate.reserve(phone: phone, clientIP: "203.0.113.7") } }
            return try await group.reduce(into: [Decision]()) { $0.append($1) }
        }
        #expect(decisions.allSatisfy { $0.allowed && $0.retryAfterMilliseconds == 60_000 }, "\(decisions)")
        #expect(decisions.filter(\.observed.isEmpty).count == 2)
        #expect(decisions.filter { $0.observed == [.ipLimit] }.count == 8)
        let ipKey = ipSendsKey("203.0.113.7")
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(2))
        // The number's cooldown still refuses; the cap is reported observed.
        let repeated = try await gate.reserve(phone: numbers[0], clientIP: "203.0.113.7")
        #expect(!repeated.allowed && repeated.reason == .cooldown && repeated.observed == [.ipLimit], "\(repeated)")
        // The record written in its own slot replays the observed rules too.
        let first = try await gate.reserve(phone: numbers[10], clientIP: "203.0.113.7", idempotencyKey: "observe-1")
        #expect(first.allowed && first.observed == [.ipLimit])
        let replay = try await gate.reserve(phone: numbers[10], clientIP: "203.0.113.7", idempotencyKey: "observe-1")
        #expect(replay.replayed && replay.observed == [.ipLimit] && replay.countdownToken == first.countdownToken)
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(2))
        // Not observed, the same cap refuses.
        let strict = try Self.gate(cluster: cluster, policy: Policy(ipMaxSends: 2, ipWindow: .seconds(3600)))
        let refused = try await strict.reserve(phone: numbers[11], clientIP: "203.0.113.7")
        #expect(!refused.allowed && refused.reason == .ipLimit && refused.observed.isEmpty)
    }

    /// The record, stored once every step unwound, holds what the budgets' step observed:
    /// a replay says it too, as on one Redis (`GateBudgetTests`).
    @Test func aReplayOnAClusterCarriesWhatAnObservedBudgetSaw() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        var policy = Policy(ladder: [.seconds(60)])
        policy.countryMaxSends = ["CN": SendBudget(limit: 1, window: .seconds(3600))]
        policy.observe = [.countryLimit]
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        let numbers = Self.spreadNumbers(2)
        #expect(try await gate.reserve(phone: numbers[0]).observed.isEmpty)
        let first = try await gate.reserve(phone: numbers[1], idempotencyKey: "order-7")
        #expect(first.allowed && first.observed == [.countryLimit], "\(first)")
        let replay = try await gate.reserve(phone: numbers[1], idempotencyKey: "order-7")
        #expect(replay.replayed && replay.allowed && replay.observed == [.countryLimit], "\(replay)")
    }
}
