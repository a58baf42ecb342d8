import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 12 on a Redis Cluster, where the number, the IP's set and the idempotency record
/// live in different slots (part of `GateClusterTests`, so it runs serialized with it).
extension GateClusterTests {
    @Test func refundsAreLimitedVoidTheirRecordAndNeverLowerTheIPCount() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let policy = Policy(
            ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3, ipMaxSends: 5, ipWindow: .seconds(3600), maxRefunds: 2)
        let gate = try Self.gate(cluster: cluster, policy: policy)
        let numbers = Self.spreadNumbers(4)
        let number = numbers[0], ip = "203.0.113.7"
        let first = try await Self.whenServed(within: .seconds(10)) { () async throws(GateError) in
            try await gate.reserve(phone: number, clientIP: ip, idempotencyKey: "k1")
        }
        #expect(first.allowed)
        #expect(try await gate.release(phone: number))

        // The retry with k1 is decided afresh: the refund voided its record on its slot.
        let retried = try await gate.reserve(phone: number, clientIP: ip, idempotencyKey: "k1")
        #expect(retried.allowed && !retried.replayed, "\(retried)")
        #expect(retried.countdownToken != first.countdownToken)
        #expect(retried.sendsLeft == 2, "the refunded send left the window; the retry counts")
        let replay = try await gate.reserve(phone: number, clientIP: ip, idempotencyKey: "k1")
        #expect(replay.replayed && replay.countdownToken == retried.countdownToken)

        #expect(try await gate.release(phone: number))
        #expect(try await gate.reserve(phone: number, clientIP: ip).allowed)
        let refused = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
        #expect(refused?.code == "refund_limit")
        #expect((refused?.retryAfterMilliseconds ?? 0) > 3_500_000)
        #expect(try await gate.peek(phone: number).active, "nothing changed: the cooldown keeps running")

        let refundsKey = gateKey(.refunds, number), ipKey = ipSendsKey(ip)
        #expect(try cluster.client(forKey: refundsKey).command("ZCARD", refundsKey) == .integer(2))
        // Three allowed sends from the IP, each its own entry; the refunds lowered nothing.
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(3))

        // The send that fills the IP's cap answers with the IP's wait; past it, the number
        // is still asked, so the ip_limit answer carries its sends_left.
        #expect(try await gate.reserve(phone: numbers[1], clientIP: ip).retryAfterMilliseconds == 60_000)
        let filling = try await gate.reserve(phone: numbers[2], clientIP: ip)
        #expect(filling.allowed && filling.retryAfterMilliseconds > 3_500_000, "\(filling)")
        let capped = try await gate.reserve(phone: numbers[3], clientIP: ip)
        #expect(capped.reason == .ipLimit && capped.sendsLeft == 3, "\(capped)")
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(5))
        #expect(try await gate.reserve(phone: numbers[3]).allowed, "the refused number reserved nothing")
    }

    /// Issue 12 item 1 on a cluster: 20 rounds of three concurrent sends of one number from
    /// one IP, then a refund, against an IP cap of 5. The sends of a round take their IP
    /// shares in the same millisecond; a refused one gives its own share back, never the
    /// allowed one's (each is the send's token), so exactly 5 are allowed.
    @Test func concurrentSendsAndRefundsFromOneIPGetExactlyTheIPCap() async throws {
        let cluster = try RedisCluster()
        defer { cluster.stop() }
        let policy = Policy(ladder: [.seconds(60)], ipMaxSends: 5, ipWindow: .seconds(3600), maxRefunds: 100)
        let gate = try await Self.servedGate(cluster: cluster, policy: policy)
        let number = "+8613800138000", ip = "203.0.113.7"
        var allowed = 0
        for _ in 0..<20 {
            async let first = gate.reserve(phone: number, clientIP: ip)
            async let second = gate.reserve(phone: number, clientIP: ip)
            async let third = gate.reserve(phone: number, clientIP: ip)
            let decisions = try await [first, second, third]
            #expect(decisions.filter(\.allowed).count <= 1)
            allowed += decisions.filter(\.allowed).count
            _ = try await gate.release(phone: number)
        }
        #expect(allowed == 5)
        let ipKey = ipSendsKey(ip)
        #expect(try cluster.client(forKey: ipKey).command("ZCARD", ipKey) == .integer(5))
    }
}
