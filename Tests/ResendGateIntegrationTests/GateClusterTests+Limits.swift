import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 36, item 1 on a Redis Cluster: limits written as data take the budgets' steps
/// (`SendBudgets`), in slots of their own, and hold as on one Redis.
extension GateClusterTests {
    @Test func limitsWrittenAsDataHoldAcrossSlots() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        var policy = Policy(ladder: [.seconds(60)], maxRefunds: 100)
        policy.limits = try SendLimit.parseList("all-hour,per=all,sends=12/1h;ip-number,per=ip+number,sends=1/1h")
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        // A pair of an IP and a number sends once, refunds or not; another IP may send to it.
        let numbers = Self.spreadNumbers(31)
        #expect(try await gate.reserve(phone: numbers[30], clientIP: "203.0.113.5").allowed)
        #expect(try await gate.release(phone: numbers[30]))
        let again = try await gate.reserve(phone: numbers[30], clientIP: "203.0.113.5")
        #expect(again.reason == .ipLimit && again.retryAfterMilliseconds > 3_590_000)
        #expect(try await gate.reserve(phone: numbers[30], clientIP: "203.0.113.6").allowed)
        // The total counted those two: ten more of thirty at once.
        let decisions = try await Self.reserveAtOnce(gate, Array(numbers[0..<30]))
        #expect(decisions.filter { $0.allowed }.count == 10)
        #expect(decisions.filter { !$0.allowed }.allSatisfy { $0.reason == .globalLimit })
        var counted = 0
        for master in try cluster.masters() {
            let client = try cluster.client(port: master.port)
            for key in (try client.command("KEYS", "rg:budget:{\\*:all-hour.:*").array ?? []).compactMap(\.string) {
                counted += try client.command("ZCARD", key).integer ?? 0
            }
        }
        #expect(counted == 12)
    }
}
