import Countdown
import Foundation
import GateRuntime
import RedisClient
@testable import ResendGate
import ResendGateTestSupport
import Testing

/// The two scripts that issue codes must agree: `issue.lua` (the default policy's send
/// without an `Idempotency-Key`) and `code-issue.lua` inside `reserve.lua` (every other
/// send). Two numbers get the same generated run of sends, checks, refunds and time
/// passing, one always through each path; every step must answer the same for both.
@Suite("Issued codes: the plain and the scripted send agree", .ownThread)
struct IssuedCodePathsTests {
    enum Step: CaseIterable {
        case send, checkRight, checkWrong, refund, cooldownPasses, minutesPass
    }

    /// What a step answered, without what differs by nature (codes, times, tokens).
    struct Outcome: Equatable {
        var allowed: Bool?
        var reason: Decision.Reason?
        var code: String?  // "new", "same" or nil
        var resent: Bool?
        var check: String?
    }

    @Test(arguments: [IssuedCodes.Resend.same, .fresh])
    func generatedRunsAnswerTheSameOnBothPaths(_ resend: IssuedCodes.Resend) async throws {
        try await withRedis { redis in
            let policy = Policy(ladder: [.seconds(60)], maxRefunds: 3, maxFailedChecks: 3, codes: IssuedCodes(onResend: resend))
            let gate = try GateIssuedCodeTests.gate(redis, policy: policy)
            let client = try redis.client()
            let plain = "+8613800138000", scripted = "+8613800138001"
            var lastCode: [String: String] = [:]
            var generator = SplitMix64(seed: resend == .same ? 35 : 53)
            var keys = 0
            for index in 0..<120 {
                let step = Step.allCases.randomElement(using: &generator)!
                var outcomes: [Outcome] = []
                for phone in [plain, scripted] {
                    var outcome = Outcome()
                    switch step {
                    case .send:
                        keys += 1
                        let decision = try await gate.reserve(phone: phone, idempotencyKey: phone == scripted ? "run-\(keys)" : nil)
                        outcome.allowed = decision.allowed
                        outcome.reason = decision.reason
                        if let issued = decision.issuedCode {
                            outcome.code = issued.code == lastCode[phone] ? "same" : "new"
                            outcome.resent = issued.resent
                            lastCode[phone] = issued.code
                        }
                    case .checkRight, .checkWrong:
                        let code = lastCode[phone] ?? "000000"
                        let typed = step == .checkRight ? code : GateIssuedCodeTests.wrong(code)
                        switch await GateIssuedCodeTests.check(gate, typed, phone: phone) {
                        case .success: outcome.check = "valid"
                        case .failure(let error): outcome.check = error.code + (error.attemptsLeft.map { " \($0)" } ?? "")
                        }
                    case .refund:
                        do throws(GateError) {
                            outcome.allowed = try await gate.release(phone: phone)
                        } catch {
                            outcome.check = error.code
                        }
                    case .cooldownPasses, .minutesPass:
                        break
                    }
                    outcomes.append(outcome)
                }
                if step == .cooldownPasses { try client.advanceTime(byMilliseconds: 60_000) }
                if step == .minutesPass { try client.advanceTime(byMilliseconds: 240_000) }
                #expect(outcomes[0] == outcomes[1], "step \(index) \(step): plain \(outcomes[0]), scripted \(outcomes[1])")
            }
        }
    }
}
