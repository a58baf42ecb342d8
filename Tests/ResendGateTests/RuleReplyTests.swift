import Foundation
import GateEventLoop
@testable import RedisClient
@testable import ResendGate
import Testing

/// A store that answers from a function of the call (the script, or nil for a command, and
/// the call's text) and records every call: each rule's reply handling through the seam
/// (`GateStore`), with replies a real Redis cannot easily be made to give.
final class ScriptedStore: GateStore, @unchecked Sendable {  // used on one loop thread, read after it answered
    let isCluster: Bool
    let statistics = RedisStatistics()
    private let answer: (RedisScript?, String) -> RedisReply?
    private(set) var calls: [String] = []

    init(cluster: Bool = false, answer: @escaping (RedisScript?, String) -> RedisReply?) {
        isCluster = cluster
        self.answer = answer
    }

    func evaluate(
        _ script: RedisScript, slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void
    ) { reply(script, build, completion) }

    func send(
        slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void
    ) { reply(nil, build, completion) }

    private func reply(
        _ script: RedisScript?, _ build: (inout RedisArguments) -> Void, _ completion: (Result<RedisReply, RedisError>) -> Void
    ) {
        var args = RedisArguments()
        build(&args)
        let text = String(decoding: args.bytes.map { $0 < 0x20 ? 0x20 : $0 }, as: UTF8.self)
        calls.append(text)
        completion(answer(script, text).map { .success($0) } ?? .failure(RedisError(.unavailable, "not in the table")))
    }

    func ping(_ completion: @escaping (Bool) -> Void) { completion(false) }
    func follow(channel: String, onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void) -> (any ChannelFollowing)? { nil }
    func close() {}
}

@Suite("The store seam: each rule's replies")
struct RuleReplyTests {
    static let phone = "+8613800138000"

    /// Runs `body` on a worker of `policy` over `store`; its result once it answered.
    static func run<T>(
        _ policy: Policy, _ store: ScriptedStore,
        _ body: @escaping (GateWorker, PhoneNumber, @escaping (Result<T, GateError>) -> Void) -> Void
    ) throws -> Result<T, GateError> {
        let configuration = try GateConfiguration(
            redis: try RedisConfiguration(url: "redis://127.0.0.1:1/0"), policies: PolicySet(fallback: policy),
            tokenSecret: "a token secret of the test's own, long enough")
        let loop = EventLoop.startThread(name: "rule-reply-test")
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        nonisolated(unsafe) var outcome: Result<T, GateError>?
        nonisolated(unsafe) let body = body
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let worker = GateWorker(loop: loop, configuration: configuration, store: { _ in store })
            body(worker, try! worker.phone(phone)) { result in
                outcome = result
                done.signal()
            }
        }
        for _ in 0..<1_000 where done.wait(timeout: .now() + .milliseconds(10)) == .success { break }
        return try #require(outcome)
    }

    static func release(_ reply: RedisReply, cluster: Bool = false) throws -> (Result<Bool, GateError>, [String]) {
        let store = ScriptedStore(cluster: cluster) { script, _ in script == nil ? .integer(1) : reply }
        let result: Result<Bool, GateError> = try run(Policy(ladder: [.seconds(60)]), store) { worker, phone, done in
            worker.release(phone, purpose: .default, completion: done)
        }
        return (result, store.calls)
    }

    @Test func refundsReadTheirReleaseScriptsReplies() throws {
        #expect(try Self.release(.array([.integer(1), .integer(0), .bulk([])])).0.get() == true)
        #expect(try Self.release(.array([.integer(0), .integer(0), .bulk([])])).0.get() == false)
        #expect(throws: GateError.refundLimit(retryAfterMilliseconds: 5_000, maxRefunds: 1)) {
            try Self.release(.array([.integer(-1), .integer(5_000), .bulk([])])).0.get()
        }
        let locked = try Self.release(.array([.integer(-2), .integer(0), .bulk([])])).0
        if case .failure(let error) = locked { #expect(error.code == "locked" && error.retryAfterMilliseconds == 1) } else { Issue.record("\(locked)") }
        for malformed in [RedisReply.integer(1), .array([.integer(1), .integer(0)]), .array([.bulk([]), .integer(0), .bulk([])])] {
            let result = try Self.release(malformed).0
            if case .failure(let error) = result { #expect(error.code == "store_unavailable") } else { Issue.record("\(result)") }
        }
    }

    /// On a cluster the refunded send's idempotency record lives in another slot: it is
    /// deleted before the answer.
    @Test func aRefundOnAClusterDeletesTheRecordItsScriptNames() throws {
        let (result, calls) = try Self.release(.array([.integer(1), .integer(0), .bulk(Array("rg:idem:{abc}".utf8))]), cluster: true)
        #expect(try result.get() == true)
        #expect(calls.last?.contains("DEL") == true && calls.last?.contains("rg:idem:{abc}") == true, "\(calls)")
    }

    static func verify(_ outcome: VerificationOutcome, _ reply: RedisReply) throws -> Result<VerificationResult, GateError> {
        var policy = Policy(ladder: [.seconds(60)])
        policy.maxFailedChecks = 3
        return try run(policy, ScriptedStore { script, _ in script == nil ? nil : reply }) { worker, phone, done in
            worker.verify(phone, purpose: .default, outcome: outcome, completion: done)
        }
    }

    @Test func theLockoutReadsItsVerifyScriptsReplies() throws {
        #expect(try Self.verify(.failed, .array([.integer(0), .integer(2)])).get().attemptsLeft == 2)
        #expect(try Self.verify(.verified, .array([.integer(0), .integer(3)])).get().attemptsLeft == nil)
        let refusals: [(RedisReply, String, Int64?)] = [
            (.array([.integer(-1), .integer(700)]), "locked", 700),
            (.array([.integer(-2), .integer(0)]), "no_code_sent", nil),
            (.array([.integer(-3), .integer(900)]), "code_locked", 900),
            (.array([.integer(-1)]), "store_unavailable", nil),
            (.bulk([]), "store_unavailable", nil),
        ]
        for (reply, code, wait) in refusals {
            let result = try Self.verify(.failed, reply)
            guard case .failure(let error) = result else { Issue.record("\(reply): \(result)"); continue }
            #expect(error.code == code, "\(reply)")
            if let wait { #expect(error.retryAfterMilliseconds == wait, "\(reply)") }
        }
    }

    /// A cluster's budgets: a step per shard (`budget-take.lua`), one budget after another.
    static func reserveOnCluster(_ answer: @escaping (RedisScript?, String) -> RedisReply?) throws -> (Result<Decision, GateError>, [String]) {
        var policy = Policy(ladder: [.seconds(60)])
        policy.countryMaxSends = ["CN": SendBudget(limit: 100, window: .seconds(3600))]
        policy.maxSendsTotal = SendBudget(limit: 500, window: .seconds(3600))
        let store = ScriptedStore(cluster: true, answer: answer)
        let result: Result<Decision, GateError> = try run(policy, store) { worker, phone, done in
            worker.reserve(SendRequest(phone: phone, purpose: .default), completion: done)
        }
        return (result, store.calls)
    }

    @Test func aFullBudgetOnAClusterRefusesWithTheSoonestShardsWaitAndGivesBackWhatItTook() throws {
        let (result, calls) = try Self.reserveOnCluster { script, text in
            guard script?.sha1 == GateScripts.budgetTake.sha1 else { return nil }
            // The country's budget has room; every shard of the total is full, the third soonest free.
            if text.contains(":CN:") { return .array([.integer(1), .integer(0), .integer(1_700_000_000_000)]) }
            let wait = text.contains(":total:2}") ? 4_000 : 9_000
            return .array([.integer(0), .integer(wait), .integer(1_700_000_000_000)])
        }
        let decision = try result.get()
        #expect(!decision.allowed && decision.reason == .globalLimit && decision.budgetLimit == 500)
        #expect(decision.retryAfterMilliseconds == 4_000)
        #expect(calls.filter { $0.contains(":total:") && !$0.contains("ZREM") }.count == SendBudget.shardCount)
        #expect(calls.contains { $0.contains("ZREM") && $0.contains(":CN:") }, "the country's share is given back: \(calls)")
    }

    /// A budget step's reply the script never gives (a share taken with a wait) is a store
    /// failure: the shares taken before it are given back, and the number is never asked.
    @Test func aMalformedBudgetReplyOnAClusterIsAStoreFailureThatGivesBack() throws {
        let (result, calls) = try Self.reserveOnCluster { script, text in
            guard script?.sha1 == GateScripts.budgetTake.sha1 else { return nil }
            return text.contains(":CN:")
                ? .array([.integer(1), .integer(0), .integer(1_700_000_000_000)])
                : .array([.integer(1), .integer(5), .integer(1_700_000_000_000)])
        }
        if case .failure(let error) = result { #expect(error.code == "store_unavailable") } else { Issue.record("\(result)") }
        #expect(calls.contains { $0.contains("ZREM") && $0.contains(":CN:") }, "\(calls)")
        #expect(!calls.contains { $0.contains("}:cooldown") }, "the number's step never ran: \(calls)")
    }
}
