import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 23, finding 3: a lockout an attacker cannot aim. Wrong codes count only against a
/// code the gate let through, at most `maxFailedChecks` per code, and by default the lock
/// holds that code, not the number's sends. Tried as the attacker would: failures for a
/// number nobody asked a code for, failures for someone else's code, many at once, and a
/// guesser who asks for code after code.
@Suite("Gate: the wrong-code lock cannot be aimed")
struct GateCodeLockoutTests {
    static let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 3)

    static func failed(_ gate: Gate, _ phone: String = number) async -> Result<Int?, GateError> {
        do throws(GateError) {
            return .success(try await gate.verify(phone: phone, outcome: .failed).attemptsLeft)
        } catch {
            return .failure(error)
        }
    }

    /// Without a send, a `failed` is 409 `no_code_sent` and writes nothing; it was
    /// finding 3's lock: five of them used to lock a number that was never sent a code.
    @Test func failuresForANumberWithNoCodeCountNothing() async throws {
        try await withLiveGate(policy: Self.policy) { redis, gate async throws in
            for _ in 0..<20 {
                let answer = await Self.failed(gate)
                #expect(answer == .failure(.noCodeSent), "\(answer)")
            }
            #expect(try redis.client().command("DBSIZE") == .integer(0))
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(await Self.failed(gate) == .success(2))
        }
    }

    /// Someone else's failures burn at most the victim's current code: its sends are never
    /// blocked, and a new code gets the whole count again.
    @Test func someoneElsesFailuresNeverLockTheOwnerOutOfCodes() async throws {
        try await withLiveGate(policy: Self.policy) { redis, gate async throws in
            let client = try redis.client()
            let granted = ContinuousClock.now
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(await Self.failed(gate) == .success(2))
            #expect(await Self.failed(gate) == .success(1))
            guard case .failure(let third) = await Self.failed(gate) else { Issue.record("the third wrong code was counted"); return }
            #expect(third.kind == .codeLocked)
            let passed = millisecondsPassed(since: granted)
            #expect(third.retryAfterMilliseconds.map { $0 > 50_000 - passed && $0 <= 60_000 } == true, "the wait for a new code: \(third), \(passed) ms after the send")
            // The burnt code cannot be checked again, not even as right: a guesser who hit it
            // on a fourth try gets nothing.
            for outcome in VerificationOutcome.allCases {
                let error = await gateError { () async throws(GateError) in try await gate.verify(phone: number, outcome: outcome) }
                #expect(error?.kind == .codeLocked, "\(outcome)")
            }
            // The number itself is not locked: its cooldown runs as before, then a new code
            // goes out, with its own three checks.
            let refused = try await gate.reserve(phone: number)
            #expect(refused.reason == .cooldown)
            try client.runOut(cooldownKey())
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(await Self.failed(gate) == .success(2))
            #expect(try await gate.verify(phone: number, outcome: .verified).outcome == .verified)
        }
    }

    /// Fifty wrong codes at once against one code: exactly `maxFailedChecks - 1` answers
    /// with attempts left, every other one `code_locked`.
    @Test func concurrentWrongCodesGetExactlyTheAttemptsOfTheCode() async throws {
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 5)
        try await withLiveGate(policy: policy) { _, gate async throws in
            #expect(try await gate.reserve(phone: number).allowed)
            let answers = await withTaskGroup(of: Result<Int?, GateError>.self) { group in
                for _ in 0..<50 { group.addTask { await Self.failed(gate) } }
                return await group.reduce(into: [Result<Int?, GateError>]()) { $0.append($1) }
            }
            let left = answers.compactMap { try? $0.get() }.compactMap { $0 }
            #expect(left.sorted() == [1, 2, 3, 4])
            #expect(answers.filter { if case .failure(let error) = $0 { error.kind == .codeLocked } else { false } }.count == 46)
        }
    }

    /// A guesser who asks for code after code gets at most `maxFailedChecks` wrong checks
    /// per code times the codes the number's limits let out in the window.
    @Test func bruteForceIsBoundedByChecksPerCodeTimesCodesPerWindow() async throws {
        let policy = Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3, maxFailedChecks: 4)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            var answered = 0, refused = 0
            for round in 0..<5 {
                let send = try await gate.reserve(phone: number)
                if round >= 3 {
                    #expect(send.reason == .maxSends)
                    continue
                }
                #expect(send.allowed, "send \(round)")
                for _ in 0..<10 {
                    switch await Self.failed(gate) {
                    case .success: answered += 1
                    case .failure(let error) where error.kind == .codeLocked: refused += 1
                    case .failure(let error): Issue.record("unexpected \(error)")
                    }
                }
                // The third send filled the window: its cooldown runs until the window frees.
                if round < 2 { try client.runOut(cooldownKey()) }
            }
            // Each code: 3 checks answered with attempts left, the 4th locks it and every
            // later one is refused, so the back end accepts no more tries of it.
            #expect(answered == 3 * 3 && refused == 3 * 7, "\(answered) answered, \(refused) refused")
        }
    }

    /// Checks count against the number's last code: a send after some wrong checks is a new
    /// code, with a fresh count; the count lives as long as the window, past the cooldown.
    @Test func aNewCodeStartsAFreshCountAndAnOldOneKeepsItsCountPastTheCooldown() async throws {
        let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: 3)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(await Self.failed(gate) == .success(2))
            // The cooldown ends: the code it named is still the one the count holds.
            try client.runOut(cooldownKey())
            #expect(await Self.failed(gate) == .success(1))
            #expect(try await gate.reserve(phone: number).allowed)
            #expect(await Self.failed(gate) == .success(2))
        }
    }

    /// The script path (a policy that counts sends, cooldown in the window key) finds the
    /// last code in the window, also once its cooldown ended, and not after the window.
    @Test func aWindowedPolicyFindsTheCodeInItsWindowOnly() async throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], window: .seconds(600), maxFailedChecks: 3)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let client = try redis.client()
            #expect(try await gate.reserve(phone: number, clientIP: "203.0.113.7").allowed)
            try client.advanceTime(byMilliseconds: 120_000)
            #expect(await Self.failed(gate) == .success(2))
            try client.advanceTime(byMilliseconds: 600_000)
            #expect(await Self.failed(gate) == .failure(.noCodeSent))
        }
    }
}
