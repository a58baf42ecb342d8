import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, items 1 and 2: verification outcomes and the wrong-code lockout, against a
/// real Redis, tried the way a code guesser would: more failures, concurrent failures,
/// a `verified` or a refund to get out of the lock, the script path and the plain one.
@Suite("Gate: wrong-code lockout against a real Redis")
struct GateLockoutTests {
    static let lockout = Policy(ladder: [.seconds(60)], maxFailedChecks: 3, lockout: .seconds(600), lockoutScope: .number)

    @Test func wrongCodesCountDownThenLockSendsAndVerifications() async throws {
        try await withLiveGate(policy: Self.lockout) { redis, gate async throws in
            let client = try redis.client()
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 2)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 1)
            let locked = ContinuousClock.now
            let third = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            #expect(third?.code == "locked")
            #expect(third.flatMap(\.retryAfterMilliseconds).map { $0 > 590_000 && $0 <= 600_000 } == true, "\(String(describing: third))")

            // Sends are refused with `locked` and the lock's wait, no token to follow.
            let send = try await gate.reserve(phone: "+86 138 0013 8000")
            #expect(!send.allowed && send.reason == .locked && send.countdownToken == nil)
            #expect(send.retryAfterMilliseconds > 590_000 - millisecondsPassed(since: locked) && send.retryAfterMilliseconds <= 600_000)
            // Neither the right code, nor a refund, nor another wrong one gets out of it.
            for outcome in VerificationOutcome.allCases {
                let error = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: outcome) }
                #expect(error?.code == "locked", "\(outcome)")
            }
            let refund = await gateError { () async throws(GateError) in try await gate.release(phone: number) }
            #expect(refund?.code == "locked")
            #expect(try client.command("GET", cooldownKey()) == .bulkString("locked"))
            #expect(try await gate.peek(phone: number).active)

            // When the lock ends the number starts afresh: a send, and three wrong codes again.
            try client.runOut(cooldownKey())
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 2)
        }
    }

    @Test func theRightCodeClearsTheWrongOnes() async throws {
        try await withLiveGate(policy: Self.lockout) { _, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(try await gate.reserve(phone: number, purpose: "login").allowed)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 2)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 1)
            let verified = try await gate.verify(phone: number, outcome: .verified)
            #expect(verified.outcome == .verified && verified.attemptsLeft == nil && verified.phone.e164 == number)
            #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == 2)
            // Another purpose counts on its own.
            #expect(try await gate.verify(phone: number, purpose: "login", outcome: .failed).attemptsLeft == 2)
        }
    }

    /// A lock never shortens a wait: a running hour-long cooldown keeps its hour.
    @Test func aLockKeepsALongerCooldownsWait() async throws {
        let policy = Policy(ladder: [.seconds(3600)], maxFailedChecks: 1, lockout: .seconds(600), lockoutScope: .number)
        try await withLiveGate(policy: policy) { _, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            let error = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            #expect(error.flatMap(\.retryAfterMilliseconds).map { $0 > 3_500_000 } == true)
            #expect(try await gate.reserve(phone: number).retryAfterMilliseconds > 3_500_000)
        }
    }

    /// The script path (a policy that counts sends) refuses a locked number too, naming the
    /// lock even when its window is also full.
    @Test func theScriptPathRefusesALockedNumber() async throws {
        let policy = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 1, maxFailedChecks: 1, lockout: .seconds(600), lockoutScope: .number)
        try await withLiveGate(policy: policy) { _, gate async throws in
            #expect(try await gate.reserve(phone: number, idempotencyKey: "a").allowed)
            _ = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: .failed) }
            let send = try await gate.reserve(phone: number, clientIP: "203.0.113.7", idempotencyKey: "b")
            #expect(!send.allowed && send.reason == .locked && send.retryAfterMilliseconds > 590_000)
        }
    }

    /// Fifty wrong codes at once: exactly `maxFailedChecks - 1` are answered with attempts
    /// left, every other one is `locked`; there is no window in which more get through.
    @Test func concurrentWrongCodesGetExactlyTheAttempts() async throws {
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 5, lockout: .seconds(600), lockoutScope: .number)
        try await withLiveGate(policy: policy) { _, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            let answers = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<50 {
                    group.addTask { try? await gate.verify(phone: number, outcome: .failed).attemptsLeft }
                }
                return await group.reduce(into: [Int?]()) { $0.append($1) }
            }
            #expect(answers.compactMap { $0 }.sorted() == [1, 2, 3, 4])
            #expect(try await gate.reserve(phone: number).reason == .locked)
        }
    }

    @Test func aPolicyWithoutLockoutRecordsNothing() async throws {
        try await withLiveGate(policy: Policy(maxFailedChecks: 0)) { redis, gate async throws in
            for _ in 0..<10 { #expect(try await gate.verify(phone: number, outcome: .failed).attemptsLeft == nil) }
            #expect(try redis.client().command("DBSIZE") == .integer(0))
        }
    }
}
