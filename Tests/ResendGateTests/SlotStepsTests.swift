import Foundation
@testable import RedisClient
@testable import ResendGate
import Testing

/// Where each rule runs (`Placement`) and the runner of the steps in slots of their own
/// (`SlotSteps`), through the store seam: on one Redis every rule of a send is one call; on a
/// cluster each rule outside the number's slot is a step, in one order, unwound in reverse.
@Suite("The store seam: where each rule runs")
struct SlotStepsTests {
    /// Every rule that may live outside the number's slot: a country budget, the pumping
    /// guard, the per-IP cap (and the request's `Idempotency-Key`).
    static let policy: Policy = {
        var policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 20, window: .seconds(3600), minConversion: 0.3))
        policy.countryMaxSends = ["CN": SendBudget(limit: 100, window: .seconds(3600))]
        policy.ipMaxSends = 10
        return policy
    }()

    /// One send with every rule, the number answering `answer`; each call named in order.
    static func send(cluster: Bool, answer: String) throws -> (Result<Decision, GateError>, [String]) {
        nonisolated(unsafe) var order: [String] = []
        let now = RedisReply.integer(1_700_000_000_000)
        let store = ScriptedStore(cluster: cluster) { script, text in
            let name: String, reply: RedisReply
            switch script?.sha1 {
            case nil where text.hasPrefix("GET"): (name, reply) = ("record", .null)
            case nil where text.hasPrefix("ZREM"): (name, reply) = (text.contains("ip:") ? "ip back" : "budget back", .integer(1))
            case nil: (name, reply) = (text, .integer(1))
            case GateScripts.budgetTake.sha1: (name, reply) = ("budget", .array([.integer(1), .integer(0), now]))
            case GateScripts.ipTake.sha1: (name, reply) = ("ip", .array([.integer(1), .integer(0)]))
            case GateScripts.idempotencyPut.sha1: (name, reply) = ("record stored", .integer(1))
            case GateScripts.pumping.sha1:
                name = text.contains("give") ? "prefix back" : "prefix"
                reply = .array([.integer(0), .integer(1), .integer(0), .integer(0), .integer(0), now, .integer(0), .bulk(Array("f".utf8))])
            // The number's script; any other (the gates' window-cooldowns table) is not named.
            default: (name, reply) = (text.contains("}:cooldown") ? "number" : "", .bulk(Array(answer.utf8)))
            }
            if !name.isEmpty { order.append(name) }
            return reply
        }
        let result: Result<Decision, GateError> = try RuleReplyTests.run(policy, store) { worker, phone, done in
            let request = SendRequest(phone: phone, purpose: .default, clientAddress: ClientAddress("203.0.113.7"), idempotencyKey: "k")
            worker.reserve(request, completion: done)
        }
        return (result, order)
    }

    static let allowed = "1  60000 1 60000 1700000000000 AAAAAAAAAAAAAAAA "
    static let refused = "0 cooldown 30000 1 60000 1700000000000 AAAAAAAAAAAAAAAA "

    @Test func onOneRedisEveryRuleIsPartOfTheNumbersOneCall() throws {
        let (result, order) = try Self.send(cluster: false, answer: Self.allowed)
        #expect(try result.get().allowed)
        #expect(order == ["number"])
    }

    /// The record's replay first, then the budgets, the guard, the IP cap; an allowed new send
    /// keeps every share, and its record is stored last.
    @Test func onAClusterEachRuleIsAStepAndANewSendKeepsItsShares() throws {
        let (result, order) = try Self.send(cluster: true, answer: Self.allowed)
        #expect(try result.get().allowed)
        #expect(order == ["record", "budget", "prefix", "ip", "number", "record stored"])
    }

    /// A refusal gives every share back, the last taken first.
    @Test func onAClusterARefusalGivesTheSharesBackInReverse() throws {
        let (result, order) = try Self.send(cluster: true, answer: Self.refused)
        #expect(try result.get().reason == .cooldown)
        #expect(order == ["record", "budget", "prefix", "ip", "number", "ip back", "prefix back", "budget back", "record stored"])
    }
}
