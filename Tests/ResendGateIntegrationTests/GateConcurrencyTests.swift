import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Many callers, one number: the script's atomicity, seen from the library.
@Suite("Gate: concurrency and escalation against a real Redis")
struct GateConcurrencyTests {
    @Test func fiveHundredConcurrentReservesAllowExactlyOne() async throws {
        // Atomicity is the point, not speed: the 500 answers may take longer than the usual
        // 1 s Redis timeout under a sanitizer with other tests on the two cores.
        try await withLiveGate(timeout: .seconds(10)) { redis, gate async throws in
            let start = ContinuousClock.now
            let decisions = try await withThrowingTaskGroup(of: Decision.self) { group in
                for index in 0..<500 {
                    // Mixed spellings too: they must all land on the same key.
                    let spelling = index % 2 == 0 ? number : "138 0013 8000"
                    group.addTask { try await gate.reserve(phone: spelling) }
                }
                return try await group.reduce(into: [Decision]()) { $0.append($1) }
            }
            #expect(decisions.count == 500)
            let allowed = decisions.filter(\.allowed)
            #expect(allowed.count == 1)
            #expect(allowed.first?.retryAfterMilliseconds == 60_000)
            let denied = decisions.filter { !$0.allowed }
            #expect(denied.count == 499)
            #expect(denied.allSatisfy { $0.reason == .cooldown })
            expectRemaining(denied.map(\.retryAfterMilliseconds).min() ?? 0, since: start)
            #expect(try redis.client().keys() == [cooldownKey()])
        }
    }

    @Test func concurrentReservesOfDistinctNumbersAreAllAllowed() async throws {
        try await withLiveGate { redis, gate async throws in
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<300 {
                    group.addTask { try await gate.reserve(phone: "+86138\(String(format: "%08d", 10_000_000 + index))").allowed }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(allowed == 300)
            #expect(try redis.client().keys().count == 300)
        }
    }

    @Test func releaseRefundsTheSendSoTheLadderDoesNotClimb() async throws {
        let ladder = Policy(ladder: [.seconds(60), .seconds(120)], maxRefunds: 3)
        try await withLiveGate(policy: ladder) { redis, gate async throws in
            for refunds in 1...3 {
                let decision = try await gate.reserve(phone: number)
                #expect(decision.allowed)
                #expect(decision.retryAfterMilliseconds == 60_000)
                #expect(decision.sendsInWindow == 1)
                #expect(try redis.client().windowSends(windowKey()).count == 1)
                // The SMS provider failed: release ends the cooldown and refunds the send,
                // and the window records the refund.
                #expect(try await gate.release(phone: number))
                #expect(try redis.client().keys() == [refundsKey()])
                #expect(try redis.client().command("ZCARD", refundsKey()) == .integer(refunds))
            }
            // The 4th refund is past --max-refunds 3: the cooldown stays.
            #expect(try await gate.reserve(phone: number).allowed)
            let refused = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            #expect(refused?.code == "refund_limit")
            #expect(try await gate.peek(phone: number).active)
        }
    }

    @Test func ladderEscalatesOnceACooldownRunsOut() async throws {
        let ladder = Policy(ladder: [.seconds(30), .seconds(60)])
        try await withLiveGate(policy: ladder) { redis, gate async throws in
            let client = try redis.client()
            let first = try await gate.reserve(phone: number)
            #expect(first.allowed)
            #expect(first.retryAfterMilliseconds == 30_000)
            #expect(first.sendsInWindow == 1)

            // Redis's clock moves past the 30 s cooldown; the second send gets 60 s.
            try client.runOut(cooldownKey())
            #expect(try await gate.peek(phone: number).active == false)
            let second = try await gate.reserve(phone: number)
            #expect(second.allowed)
            #expect(second.retryAfterMilliseconds == 60_000)
            #expect(second.sendsInWindow == 2)

            // The last step repeats.
            try client.runOut(cooldownKey())
            let third = try await gate.reserve(phone: number)
            #expect(third.allowed)
            #expect(third.retryAfterMilliseconds == 60_000)
            #expect(third.sendsInWindow == 3)
            #expect(try redis.client().windowSends(windowKey()).count == 3)
        }
    }

    @Test func releaseAfterAnEscalationRefundsOneStep() async throws {
        let ladder = Policy(ladder: [.seconds(30), .seconds(60), .seconds(120)])  // one refund: the default
        try await withLiveGate(policy: ladder) { redis, gate async throws in
            #expect(try await gate.reserve(phone: number).retryAfterMilliseconds == 30_000)
            try redis.client().runOut(cooldownKey())
            let second = try await gate.reserve(phone: number)
            #expect(second.retryAfterMilliseconds == 60_000)
            #expect(second.sendsInWindow == 2)
            #expect(try await gate.release(phone: number))
            let again = try await gate.reserve(phone: number)
            #expect(again.retryAfterMilliseconds == 60_000)
            #expect(again.sendsInWindow == 2)
        }
    }
}
