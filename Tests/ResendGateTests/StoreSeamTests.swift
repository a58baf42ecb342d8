import Foundation
import GateEventLoop
@testable import RedisClient
@testable import ResendGate
import Testing

@Suite("The store seam: the fraud guard's replies")
struct StoreSeamTests {
    static let policy: Policy = {
        var policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 20, window: .seconds(3600), minConversion: 0.3))
        policy.countryMaxSends = ["CN": SendBudget(limit: 100, window: .seconds(3600))]
        policy.maxSendsTotal = SendBudget(limit: 500, window: .seconds(3600))
        return policy
    }()

    /// Decides one send to a Chinese mobile with `reply` as the reserve script's answer
    /// (nil: the call fails); every other call fails. The commands sent, as text.
    static func decide(_ reply: RedisReply?) throws -> (Result<Decision, GateError>, [String]) {
        let store = ScriptedStore { script, _ in script?.source.contains("local share1, share1Window") == true ? reply : nil }
        let result: Result<Decision, GateError> = try RuleReplyTests.run(policy, store) { worker, phone, done in
            worker.reserve(SendRequest(phone: phone, purpose: .default), completion: done)
        }
        return (result, store.calls)
    }

    @Test func aFullBudgetIsItsOwnRefusalWithItsQuota() throws {
        let (result, _) = try Self.decide(.array([.integer(2), .integer(5_000), .integer(1_700_000_000_000), .bulk([]), .integer(0)]))
        let decision = try result.get()
        #expect(!decision.allowed && decision.reason == .globalLimit && decision.budgetLimit == 500)
        #expect(decision.retryAfterMilliseconds == 5_000 && decision.serverTimeMilliseconds == 1_700_000_000_000)
    }

    @Test func theGuardsRefusalSaysWhatWasObservedAndRegistersThePrefix() throws {
        let reply = RedisReply.array([.integer(0), .integer(1_200), .integer(1_700_000_000_000), .bulk(Array("country_limit".utf8)), .integer(1)])
        let (result, commands) = try Self.decide(reply)
        let decision = try result.get()
        #expect(!decision.allowed && decision.reason == .suspectedPumping && decision.observed == [.countryLimit])
        #expect(decision.nextRetryAfterMilliseconds == 60_000)
        #expect(commands.contains { $0.contains("ZADD") && $0.contains("pump:blocked") }, "\(commands)")
    }

    @Test func anAnswerWithThePrefixDueIsTheNumbersAnswerAndRegisters() throws {
        let answer = "1  60000 1 60000 1700000000000 AAAAAAAAAAAAAAAA "
        let (result, commands) = try Self.decide(.array([.bulk(Array(answer.utf8)), .integer(1)]))
        let decision = try result.get()
        #expect(decision.allowed && decision.retryAfterMilliseconds == 60_000 && decision.countdownToken != nil)
        #expect(commands.contains { $0.contains("ZADD") && $0.contains("pump:blocked") }, "\(commands)")
    }

    /// Replies the script never gives are a store failure, never an allowed send.
    @Test(arguments: [
        RedisReply.array([.integer(3), .integer(5_000), .integer(1), .bulk([]), .integer(0)]),  // no third budget
        .array([.integer(1), .integer(0), .integer(1), .bulk([]), .integer(0)]),  // a refusal with no wait
        .array([.integer(1), .integer(5), .integer(1), .integer(0), .integer(0)]),  // observed is not text
        .array([.bulk(Array("1  60000 1 60000 1 A ".utf8)), .integer(2)]),  // a flag that is not 1
        .integer(1),
    ])
    func malformedRepliesAreStoreFailures(reply: RedisReply) throws {
        let (result, _) = try Self.decide(reply)
        #expect(throws: GateError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.code == "store_unavailable") }
    }

    @Test func aFailedCallIsAStoreFailure() throws {
        let (result, _) = try Self.decide(nil)
        if case .failure(let error) = result { #expect(error.code == "store_unavailable") } else { Issue.record("\(result)") }
    }
}
