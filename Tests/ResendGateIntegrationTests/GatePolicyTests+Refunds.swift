import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Refunds against a real Redis (part of `GatePolicyTests`): the refunded send leaves the
/// window, each refund is recorded, and past `maxRefunds` a release changes nothing.
extension GatePolicyTests {
    @Test func releaseRefundsTheSendSoTheLadderStepGoesBackByOne() async throws {
        let policy = Policy(ladder: [.seconds(10), .seconds(50), .seconds(90)], window: .seconds(600), maxRefunds: 2)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            #expect(try await gate.reserve(phone: number).retryAfterMilliseconds == 10_000)
            try client.runOut(cooldownKey())
            let second = try await gate.reserve(phone: number)
            #expect(second.retryAfterMilliseconds == 50_000)
            #expect(second.sendsInWindow == 2)

            #expect(try await gate.release(phone: number))
            #expect(try await gate.peek(phone: number).active == false)
            #expect(try client.windowSends(windowKey()).count == 1)
            #expect(try client.command("ZCARD", refundsKey()) == .integer(1))

            let again = try await gate.reserve(phone: number)
            #expect(again.allowed)
            #expect(again.sendsInWindow == 2)
            #expect(again.retryAfterMilliseconds == 50_000, "the 2nd step again, not the 3rd")
            #expect(again.nextRetryAfterMilliseconds == 90_000)
            // A release with no cooldown running refunds nothing and consumes no refund.
            #expect(try await gate.release(phone: number))
            #expect(try await gate.release(phone: number) == false)
            #expect(try client.windowSends(windowKey()).count == 1)
            #expect(try client.command("ZCARD", refundsKey()) == .integer(2))

            // The window holds its 2 refunds: a third is refused and changes nothing.
            let third = try await gate.reserve(phone: number)
            #expect(third.retryAfterMilliseconds == 50_000)
            let firstRefund = try oldestScore(refundsKey(), in: client)
            let before = try client.redisTime()
            let refused = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            let after = try client.redisTime()
            #expect(refused?.code == "refund_limit")
            // Until the first refund leaves the 10 min window, by Redis's clock at the refusal:
            // the script's clock is the gate's reckoning of Redis's, off by at most the
            // reckoning's lag (a second allowed either side: ASan on a loaded machine met it).
            let wait = try #require(refused?.retryAfterMilliseconds)
            #expect(wait >= firstRefund + 599_000 - after && wait <= firstRefund + 601_000 - before, "\(wait)")
            #expect(try await gate.peek(phone: number).active, "the cooldown keeps running")
            #expect(try client.windowSends(windowKey()).count == 2)
            #expect(try client.command("ZCARD", refundsKey()) == .integer(2))
            #expect(try await gate.reserve(phone: number).reason == .cooldown)
        }
    }

    /// `maxRefunds` 0: every release is refused as `forbidden` before Redis is asked.
    @Test func refundsCanBeDisabled() async throws {
        try await withLiveGate(policy: Policy(maxRefunds: 0)) { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            let refused = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            #expect(refused?.code == "forbidden")
            #expect(refused?.isPolicyDenial == true)
            #expect(try await gate.peek(phone: number).active)
            #expect(try redis.client().keys() == [cooldownKey()])
        }
    }
}
