import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 23, finding 2: refusals cannot move the guard. A request was counted in its
/// prefix before its number was decided and given back after, so a flood of requests for
/// one number already in its cooldown (each a 429 that cost no SMS) held the prefix's
/// count up by the flood and closed a prefix whose real sends convert well. Budgets took
/// their shares the same way: the same flood filled a budget for everyone.
@Suite("Gate: a refused flood cannot close an honest prefix or fill a budget")
struct GatePumpingFloodTests {
    /// Judged from 10 sends, refused under 10 % conversion.
    static let policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 10, window: .seconds(3600), minConversion: 0.1))
    static func honest(_ index: Int) -> String { "+447911\(String(format: "%06d", index))" }

    @Test func aFloodForANumberInItsCooldownLeavesHonestNumbersAlone() async throws {
        try await withLiveGate(policy: Self.policy) { redis, gate async throws in
            // Ten sends, three verified: 30 %.
            for index in 0..<10 { #expect(try await gate.reserve(phone: Self.honest(index)).allowed) }
            for index in 0..<3 { _ = try await gate.verify(phone: Self.honest(index), outcome: .verified) }
            let flooded = Self.honest(9)
            // Waves of 400 concurrent requests for the number in its cooldown, each wave with
            // one honest new number of the prefix in its midst.
            var honestRefused: [Decision] = []
            for wave in 0..<8 {
                let decisions = try await withThrowingTaskGroup(of: (Bool, Decision).self) { group in
                    for index in 0..<400 {
                        group.addTask { (false, try await gate.reserve(phone: flooded)) }
                        if index == 200 { group.addTask { (true, try await gate.reserve(phone: Self.honest(100 + wave))) } }
                    }
                    return try await group.reduce(into: [(Bool, Decision)]()) { $0.append($1) }
                }
                #expect(decisions.filter { !$0.0 }.allSatisfy { $0.1.reason == .cooldown }, "wave \(wave)")
                honestRefused += decisions.filter { $0.0 && !$0.1.allowed }.map(\.1)
            }
            #expect(honestRefused.isEmpty, "\(honestRefused.map { "\($0.phone.e164): \(String(describing: $0.reason))" })")
            // The prefix counted exactly its allowed sends: 10 + 8. Refusals give their count
            // back in a step that is not awaited: a call on the gate's connection after them
            // is answered once Redis has them.
            _ = try await gate.peek(phone: Self.honest(0))
            #expect(try Self.counts(redis) == ["s": 18, "v": 3])
        }
    }

    /// The guard still closes a prefix that pumps, however its requests are spread: many
    /// numbers, several concurrent requests each, exactly the volume gets through.
    @Test func concurrentRequestsPerNumberStillGetExactlyTheVolume() async throws {
        try await withLiveGate(policy: Self.policy) { redis, gate async throws in
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    for _ in 0..<5 { group.addTask { try await gate.reserve(phone: Self.honest(index)).allowed } }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(allowed == 10)
            _ = try await gate.peek(phone: Self.honest(0))
            #expect(try Self.counts(redis)["s"] == 10)
            #expect(try await gate.reserve(phone: Self.honest(99)).reason == .suspectedPumping)
        }
    }

    /// The budget's twin of the first test: 10 of 13 sends of the day spent, then waves of
    /// 400 requests for a number in its cooldown, each with an honest new number in it. A
    /// flood holds at most one share at a time, so both honest numbers fit (before, the
    /// flood's shares filled the budget); afterwards exactly one send is left.
    @Test func aFloodForANumberInItsCooldownLeavesTheBudgetToHonestNumbers() async throws {
        var policy = Policy(ladder: [.seconds(60)])
        policy.maxSendsTotal = SendBudget(limit: 13, window: .seconds(86_400))
        try await withLiveGate(policy: policy) { _, gate async throws in
            for index in 0..<10 { #expect(try await gate.reserve(phone: Self.honest(index)).allowed) }
            for wave in 0..<2 {
                let decisions = try await withThrowingTaskGroup(of: (Bool, Decision).self) { group in
                    for index in 0..<400 {
                        group.addTask { (false, try await gate.reserve(phone: Self.honest(9))) }
                        if index == 200 { group.addTask { (true, try await gate.reserve(phone: Self.honest(100 + wave))) } }
                    }
                    return try await group.reduce(into: [(Bool, Decision)]()) { $0.append($1) }
                }
                #expect(decisions.filter { !$0.0 }.allSatisfy { $0.1.reason == .cooldown }, "wave \(wave)")
                let honest = try #require(decisions.first(where: \.0)?.1)
                #expect(honest.allowed, "wave \(wave): \(String(describing: honest.reason))")
            }
            #expect(try await gate.reserve(phone: Self.honest(200)).allowed)
            #expect(try await gate.reserve(phone: Self.honest(201)).reason == .globalLimit)
        }
    }

    /// The prefix's counts by kind (`s` sends, `v` verified), summed over its buckets.
    static func counts(_ redis: RedisServer) throws -> [String: Int] {
        let reply = try redis.client().command("HGETALL", "rg:pump:{default:+447911}")
        guard case .array(let items) = reply else { return [:] }
        var counts: [String: Int] = [:]
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            guard let field = items[index].string, let value = items[index + 1].string.flatMap({ Int($0) }) else { continue }
            let kind = String(field.prefix(1))
            if kind == "s" || kind == "v" { counts[kind, default: 0] += value }
        }
        return counts
    }
}
