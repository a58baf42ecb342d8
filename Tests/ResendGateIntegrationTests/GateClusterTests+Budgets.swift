import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 4 on a Redis Cluster (part of `GateClusterTests`, so it runs serialized
/// with it): a budget's shards have hash tags of their own, spread over the masters, and
/// a send walks them one call a shard; the budget still holds exactly.
extension GateClusterTests {
    @Test func budgetsHoldUnderFiftyConcurrentSendersAcrossSlots() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        var policy = Policy(ladder: [.seconds(60)])
        policy.countryMaxSends = ["CN": SendBudget(limit: 20, window: .seconds(3600))]
        policy.maxSendsTotal = SendBudget(limit: 30, window: .seconds(3600))
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        let numbers = Self.spreadNumbers(65)
        let began = ContinuousClock.now
        let decisions = try await Self.reserveAtOnce(gate, Array(numbers[0..<50]))
        let passed = (ContinuousClock.now - began).wholeMilliseconds
        #expect(decisions.filter { $0.allowed }.count == 20)
        for refused in decisions where !refused.allowed {
            #expect(refused.reason == .countryLimit)
            #expect(refused.retryAfterMilliseconds > 3_599_000 - passed && refused.retryAfterMilliseconds <= 3_600_000)
        }
        // The shards live on more than one master, and hold exactly the allowed sends.
        var mastersHolding = 0
        var counted: [String: Int] = [:]
        for master in try cluster.masters() {
            let client = try cluster.client(port: master.port)
            let keys = (try client.command("KEYS", "rg:budget:*").array ?? []).compactMap(\.string)
            if !keys.isEmpty { mastersHolding += 1 }
            for key in keys { counted[key.contains(":CN:") ? "CN" : "total", default: 0] += try client.command("ZCARD", key).integer ?? 0 }
        }
        #expect(mastersHolding >= 2)
        #expect(counted == ["CN": 20, "total": 20])
        // A full budget refuses before the number is asked (its wait is the longer one).
        let allowedNumber = try #require(zip(numbers, decisions).first { $0.1.allowed }?.0)
        #expect(try await gate.reserve(phone: allowedNumber).reason == .countryLimit)

        // Observing the country budget: sends go through, reported, until the total refuses.
        var observing = policy
        observing.observe = [.countryLimit]
        let observer = try Self.gate(cluster: cluster, policy: observing)
        // A repeat takes a share of the total, is refused by its cooldown, and gives it back.
        let repeated = try await observer.reserve(phone: allowedNumber)
        #expect(repeated.reason == .cooldown && repeated.observed == [.countryLimit])
        func total() throws -> Int {
            var total = 0
            for master in try cluster.masters() {
                let client = try cluster.client(port: master.port)
                for key in (try client.command("KEYS", "rg:budget:{\\*:total:*").array ?? []).compactMap(\.string) {
                    total += try client.command("ZCARD", key).integer ?? 0
                }
            }
            return total
        }
        // The ZREM is sent once the number's answer is in: wait for it to land.
        let settled = try await poll { (try? total()).flatMap { $0 == 20 ? $0 : nil } }
        #expect(settled == 20, "\(String(describing: try? total()))")
        let more = try await Self.reserveAtOnce(observer, Array(numbers[50..<65]))
        #expect(more.filter { $0.allowed }.count == 10)
        #expect(more.allSatisfy { $0.observed == [.countryLimit] })
        #expect(more.filter { !$0.allowed }.allSatisfy { $0.reason == .globalLimit })
    }

    static func reserveAtOnce(_ gate: Gate, _ numbers: [String]) async throws -> [Decision] {
        try await withThrowingTaskGroup(of: (Int, Decision).self) { group in
            for (index, phone) in numbers.enumerated() { group.addTask { (index, try await gate.reserve(phone: phone)) } }
            var decisions = [Decision?](repeating: nil, count: numbers.count)
            for try await (index, decision) in group { decisions[index] = decision }
            return decisions.map { $0! }
        }
    }
}
