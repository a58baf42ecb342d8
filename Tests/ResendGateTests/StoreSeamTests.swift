import Foundation
import GateEventLoop
@testable import RedisClient
@testable import ResendGate
import Testing

/// A store that answers the reserve script from a table and fails every other call: a
/// rule's reply handling, tested in milliseconds through the seam (`GateStore`). The real
/// Redis is the truth for every integration test; this checks how the gate reads replies
/// it cannot easily make a real Redis give (malformed ones included).
final class TableStore: GateStore, @unchecked Sendable {  // used on one loop thread, read after it answered
    /// The reserve script's reply; nil fails the call.
    let reserveReply: RedisReply?
    private(set) var commands: [String] = []
    let statistics = RedisStatistics()
    var isCluster: Bool { false }

    init(reserveReply: RedisReply?) { self.reserveReply = reserveReply }

    func evaluate(
        _ script: RedisScript, slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void
    ) {
        guard script.source.contains("local share1, share1Window"), let reserveReply else {
            return completion(.failure(RedisError(.unavailable, "not in the table")))
        }
        completion(.success(reserveReply))
    }

    func send(
        slotKey: @autoclosure () -> String, _ build: @escaping (inout RedisArguments) -> Void,
        completion: @escaping (Result<RedisReply, RedisError>) -> Void
    ) {
        var args = RedisArguments()
        build(&args)
        commands.append(String(decoding: args.bytes, as: UTF8.self))
        completion(.failure(RedisError(.unavailable, "not in the table")))
    }

    func ping(_ completion: @escaping (Bool) -> Void) { completion(false) }
    func follow(channel: String, onMessage: @escaping ([UInt8]) -> Void, onSubscribed: @escaping () -> Void) -> (any ChannelFollowing)? { nil }
    func close() {}
}

@Suite("The store seam: the fraud guard's replies")
struct StoreSeamTests {
    static let policy: Policy = {
        var policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 20, window: .seconds(3600), minConversion: 0.3))
        policy.countryMaxSends = ["CN": SendBudget(limit: 100, window: .seconds(3600))]
        policy.maxSendsTotal = SendBudget(limit: 500, window: .seconds(3600))
        return policy
    }()

    /// Decides one send to a Chinese mobile with `reply` as the reserve script's answer.
    static func decide(_ reply: RedisReply?) throws -> (Result<Decision, GateError>, [String]) {
        let configuration = try GateConfiguration(
            redis: try RedisConfiguration(url: "redis://127.0.0.1:1/0"), policies: PolicySet(fallback: policy),
            tokenSecret: "a token secret of the test's own, long enough")
        let loop = EventLoop.startThread(name: "store-seam-test")
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let store = TableStore(reserveReply: reply)
        nonisolated(unsafe) var outcome: Result<Decision, GateError>?
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let worker = GateWorker(loop: loop, configuration: configuration, store: { _ in store })
            let phone = try! worker.phone("+8613800138000")
            worker.reserve(SendRequest(phone: phone, purpose: .default)) { result in
                outcome = result
                done.signal()
            }
        }
        #expect(waitPatiently(done) == .success)
        return (try #require(outcome), store.commands)
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

/// Waits for `semaphore` for 10 s of this process's running time, in 10 ms slices: a
/// process frozen past a single 10 s timeout (CI froze test processes for up to 15 s) woke
/// the waiter timed out before the signalling thread ran again; a freeze costs a slice here.
private func waitPatiently(_ semaphore: DispatchSemaphore, slices: Int = 1_000) -> DispatchTimeoutResult {
    for _ in 0..<slices where semaphore.wait(timeout: .now() + .milliseconds(10)) == .success { return .success }
    return .timedOut
}
