import Foundation
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 15, item 4: budgets of allowed sends per destination region and in total, on one
/// real Redis. Windows are an hour long; time moves with `advanceTime`, never by sleeping.
@Suite("Gate: send budgets per region and in total")
struct GateBudgetTests {
    static let hour = Duration.seconds(3600)

    /// `count` distinct valid Chinese mobile numbers.
    static func chineseNumbers(_ count: Int, from first: Int = 0) -> [String] {
        (first..<first + count).map { "+86138\(String(format: "%08d", 20_000_000 + $0))" }
    }

    /// `count` distinct valid British mobile numbers.
    static func britishNumbers(_ count: Int) -> [String] {
        (0..<count).map { "+4479111\(String(format: "%05d", 10_000 + $0))" }
    }

    /// Reserves all `numbers` at once and returns the decisions in their order.
    static func reserveConcurrently(_ gate: Gate, _ numbers: [String], purpose: String = "default") async throws -> [Decision] {
        try await withThrowingTaskGroup(of: (Int, Decision).self) { group in
            for (index, phone) in numbers.enumerated() {
                group.addTask { (index, try await gate.reserve(phone: phone, purpose: purpose)) }
            }
            var decisions = [Decision?](repeating: nil, count: numbers.count)
            for try await (index, decision) in group { decisions[index] = decision }
            return decisions.map { $0! }
        }
    }

    /// The sends a budget's shards hold together.
    static func counted(_ client: RedisTestClient, _ pattern: String) throws -> Int {
        try client.keys(pattern).reduce(0) { $0 + (try client.command("ZCARD", $1).integer ?? 0) }
    }

    /// The count once it is `expected` (shares given back are `ZREM`s the gate sends after
    /// answering), or the last count after 3 s.
    static func counted(_ client: RedisTestClient, _ pattern: String, settlingAt expected: Int) async throws -> Int {
        let settled = try await poll { (try? counted(client, pattern)).flatMap { $0 == expected ? $0 : nil } }
        return try settled ?? counted(client, pattern)
    }

    static func policy(country: [String: String] = [:], total: String? = nil, observe: Set<Decision.Reason> = []) throws -> Policy {
        var policy = Policy(ladder: [.seconds(60)])
        for (region, text) in country { policy.countryMaxSends[region] = try SendBudget.parse(text, field: "test") }
        policy.maxSendsTotal = try total.map { text throws in try SendBudget.parse(text, field: "test") }
        policy.observe = observe
        return policy
    }

    @Test func aCountryBudgetHoldsUnderFiftyConcurrentSendersAndLeavesOtherRegionsAlone() async throws {
        try await withLiveGate(policy: try Self.policy(country: ["CN": "20/1h"])) { redis, gate async throws in
            let began = ContinuousClock.now
            let decisions = try await Self.reserveConcurrently(gate, Self.chineseNumbers(50))
            let passed = (ContinuousClock.now - began).wholeMilliseconds
            #expect(decisions.filter(\.allowed).count == 20)
            let refused = decisions.filter { !$0.allowed }
            #expect(refused.count == 30)
            for decision in refused {
                #expect(decision.reason == .countryLimit)
                #expect(decision.retryAfterMilliseconds > 3_599_000 - passed && decision.retryAfterMilliseconds <= 3_600_000)
            }
            let client = try redis.client()
            // Eight shards of the shared budget, holding the twenty allowed sends.
            #expect(try client.keys("rg:budget:*").count == 8)
            #expect(try Self.counted(client, "rg:budget:{*:CN:*}") == 20)
            #expect(try client.pttl("rg:budget:{*:CN:0}")! > 3_590_000)
            // No refused number was recorded.
            #expect(try client.keys().count == 20)
            // Britain has no budget.
            #expect(try await Self.reserveConcurrently(gate, Self.britishNumbers(10)).allSatisfy { $0.allowed })
        }
    }

    @Test func aCallingCodesBudgetCountsEveryRegionUnderItAndARegionsItsOwn() async throws {
        // +447400... is Britain's (GB), +447911... Guernsey's (GG): both are +44.
        try await withLiveGate(policy: try Self.policy(country: ["+44": "3/1h", "GB": "1/1h"])) { redis, gate async throws in
            #expect(try await gate.reserve(phone: "+447400123456").allowed)
            #expect(try await gate.reserve(phone: "+447400123457").reason == .countryLimit)
            #expect(try await gate.reserve(phone: "+447911123456").allowed)
            #expect(try await gate.reserve(phone: "+447911123457").allowed)
            let spent = try await gate.reserve(phone: "+447911123458")
            #expect(spent.reason == .countryLimit && spent.retryAfterMilliseconds > 3_590_000)
            let client = try redis.client()
            #expect(try Self.counted(client, "rg:budget:{\\*:+44:*") == 3)
            #expect(try Self.counted(client, "rg:budget:{\\*:GB:*") == 1)
            // Other calling codes are not counted.
            #expect(try await gate.reserve(phone: Self.chineseNumbers(1)[0]).allowed)
        }
    }

    @Test func aGlobalBudgetHoldsUnderFiftyConcurrentSendersOfEveryRegion() async throws {
        try await withLiveGate(policy: try Self.policy(total: "23/1h")) { redis, gate async throws in
            let numbers = zip(Self.chineseNumbers(25), Self.britishNumbers(25)).flatMap { [$0, $1] }
            let decisions = try await Self.reserveConcurrently(gate, numbers)
            #expect(decisions.filter(\.allowed).count == 23)
            #expect(decisions.filter { !$0.allowed }.allSatisfy { $0.reason == .globalLimit && $0.retryAfterMilliseconds > 3_590_000 })
            let client = try redis.client()
            #expect(try Self.counted(client, "rg:budget:{*:total:*}") == 23)
            // 23 over 8 shards: seven hold 3, one holds 2.
            let sizes = try client.keys("rg:budget:*").map { try client.command("ZCARD", $0).integer ?? 0 }.sorted()
            #expect(sizes == [2, 3, 3, 3, 3, 3, 3, 3])
        }
    }

    @Test func aRefusedNumberGivesItsShareBack() async throws {
        try await withLiveGate(policy: try Self.policy(country: ["CN": "3/1h"], total: "100/1h")) { redis, gate async throws in
            let numbers = Self.chineseNumbers(4)
            #expect(try await gate.reserve(phone: numbers[0]).allowed)
            // Repeats of one number are refused by its cooldown and give their shares back.
            for _ in 0..<10 { #expect(try await gate.reserve(phone: numbers[0]).reason == .cooldown) }
            // At once too: while some hold a share, others may find the budget full, but
            // every share comes back.
            let repeats = try await Self.reserveConcurrently(gate, [String](repeating: numbers[0], count: 30))
            #expect(repeats.allSatisfy { !$0.allowed && ($0.reason == .cooldown || $0.reason == .countryLimit) })
            let client = try redis.client()
            #expect(try await Self.counted(client, "rg:budget:{*:CN:*}", settlingAt: 1) == 1)
            #expect(try await Self.counted(client, "rg:budget:{*:total:*}", settlingAt: 1) == 1)
            #expect(try await gate.reserve(phone: numbers[1]).allowed)
            #expect(try await gate.reserve(phone: numbers[2]).allowed)
            let spent = try await gate.reserve(phone: numbers[3])
            #expect(spent.reason == .countryLimit)
            // The country budget refused before the total was asked: the total holds three.
            #expect(try Self.counted(client, "rg:budget:{*:total:*}") == 3)
        }
    }

    /// On one Redis every budget of a send is one call that takes a share of each or none:
    /// a refusal by the total took nothing from the country's, so nothing is given back.
    @Test func aRefusalByTheTotalTakesNoShareOfTheCountrysInOneCall() async throws {
        try await withLiveGate(policy: try Self.policy(country: ["CN": "100/1h"], total: "2/1h")) { redis, gate async throws in
            let numbers = Self.chineseNumbers(5)
            let client = try redis.client()
            _ = try client.command("CONFIG", "RESETSTAT")
            #expect(try await gate.reserve(phone: numbers[0]).allowed)
            #expect(try await gate.reserve(phone: numbers[1]).allowed)
            for phone in numbers[2...] { #expect(try await gate.reserve(phone: phone).reason == .globalLimit) }
            // Read at once: no give-back is on its way.
            #expect(try Self.counted(client, "rg:budget:{*:CN:*}") == 2)
            #expect(try Self.counted(client, "rg:budget:{*:total:*}") == 2)
            let stats = try #require(try client.command("INFO", "commandstats").string)
            // Five sends, one budget call each (the number's step is the default policy's SET),
            // besides the gate's reads of where cooldowns are kept (`WindowCooldowns`: one
            // HGETALL each).
            #expect(commandCalls("evalsha", in: stats) == 5 + commandCalls("hgetall", in: stats), "\(stats)")
            #expect(!stats.contains("cmdstat_zrem:"), "\(stats)")
        }
    }

    /// One Redis: the budgets are part of the number's script, and a script that fails
    /// fails before it counts anything (the shares are its last writes but the guard's).
    @Test func aSendWhoseScriptFailsTakesNoShare() async throws {
        try await withLiveGate(policy: try Self.policy(country: ["CN": "5/1h"], total: "5/1h")) { redis, gate async throws in
            let client = try redis.client()
            // A key of the wrong type where the request's idempotency record goes: its SET fails.
            _ = try client.command("HSET", GateKeys(prefix: "rg").idempotencyRecord(idempotencyKey: "order-9"), "field", "value")
            let failed = await gateError { () async throws(GateError) in
                try await gate.reserve(phone: number, idempotencyKey: "order-9")
            }
            #expect(failed?.code == "store_unavailable")
            #expect(try Self.counted(client, "rg:budget:*") == 0)
            #expect(try await gate.reserve(phone: Self.chineseNumbers(1)[0]).allowed)
            #expect(try Self.counted(client, "rg:budget:*") == 2)
        }
    }

    @Test func theWaitIsRealAndASendIsAllowedOnceItPasses() async throws {
        try await withLiveGate(policy: try Self.policy(total: "2/1h")) { redis, gate async throws in
            let client = try redis.client()
            let numbers = Self.chineseNumbers(4)
            let beforeFirst = ContinuousClock.now
            #expect(try await gate.reserve(phone: numbers[0]).allowed)
            try client.advanceTime(byMilliseconds: 600_000)
            #expect(try await gate.reserve(phone: numbers[1]).allowed)
            let refused = try await gate.reserve(phone: numbers[2])
            #expect(refused.reason == .globalLimit)
            // The first send leaves the window 50 minutes after it was made: less the real
            // time since (seconds on a loaded machine), never more.
            let passed = (ContinuousClock.now - beforeFirst).wholeMilliseconds
            #expect(refused.retryAfterMilliseconds > 2_999_000 - passed && refused.retryAfterMilliseconds <= 3_000_000, "after \(passed) ms")
            // A minute before it passes the budget still refuses (a minute: however slow the
            // machine, the next call comes sooner), and once it has passed it allows.
            try client.advanceTime(byMilliseconds: Int(refused.retryAfterMilliseconds) - 60_000)
            #expect(try await gate.reserve(phone: numbers[2]).reason == .globalLimit)
            try client.advanceTime(byMilliseconds: 60_000)
            #expect(try await gate.reserve(phone: numbers[2]).allowed)
            #expect(try await gate.reserve(phone: numbers[3]).reason == .globalLimit)
        }
    }

    @Test func anObservedBudgetLetsSendsThroughReportsThemAndCountsNothingPastIt() async throws {
        let policy = try Self.policy(country: ["CN": "2/1h"], total: "3/1h", observe: [.countryLimit])
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let decisions = try await Self.reserveConcurrently(gate, Self.chineseNumbers(3))
            #expect(decisions.allSatisfy { $0.allowed })
            #expect(decisions.filter { $0.observed == [.countryLimit] }.count == 1)
            #expect(decisions.filter { $0.observed.isEmpty }.count == 2)
            let client = try redis.client()
            #expect(try Self.counted(client, "rg:budget:{*:CN:*}") == 2)
            // The total budget is enforced: the fourth send is refused, and says what was observed.
            let fourth = try await gate.reserve(phone: Self.chineseNumbers(1, from: 3)[0])
            #expect(fourth.reason == .globalLimit)
            #expect(fourth.observed == [.countryLimit])
        }
    }

    /// On one Redis the budgets are decided in the send's script, so its record holds what
    /// they observed: a replay says it too.
    @Test func aReplayCarriesWhatAnObservedBudgetSaw() async throws {
        let policy = try Self.policy(country: ["CN": "1/1h"], observe: [.countryLimit])
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let numbers = Self.chineseNumbers(2)
            #expect(try await gate.reserve(phone: numbers[0]).allowed)
            let first = try await gate.reserve(phone: numbers[1], idempotencyKey: "order-7")
            #expect(first.allowed && first.observed == [.countryLimit])
            let replay = try await gate.reserve(phone: numbers[1], idempotencyKey: "order-7")
            #expect(replay.replayed && replay.allowed && replay.observed == [.countryLimit])
        }
    }

    @Test func aReplayedSendTakesNoShare() async throws {
        try await withLiveGate(policy: try Self.policy(total: "2/1h")) { redis, gate async throws in
            let numbers = Self.chineseNumbers(3)
            #expect(try await gate.reserve(phone: numbers[0], idempotencyKey: "order-1").allowed)
            for _ in 0..<5 {
                let replay = try await gate.reserve(phone: numbers[0], idempotencyKey: "order-1")
                #expect(replay.allowed && replay.replayed)
            }
            #expect(try Self.counted(try redis.client(), "rg:budget:*") == 1)
            #expect(try await gate.reserve(phone: numbers[1]).allowed)
            #expect(try await gate.reserve(phone: numbers[2]).reason == .globalLimit)
        }
    }

    /// A replay is answered from its record, taking no share, in the send's one script call
    /// (on a cluster, where the budget is a step before the number's, from the record the
    /// budget step read: one that ran out in between would let the number decide afresh
    /// with no share taken, a free send outside the budget, found by review).
    @Test func aReplayIsAnsweredFromItsRecordAlone() async throws {
        try await withLiveGate(policy: try Self.policy(total: "5/1h")) { redis, gate async throws in
            let number = Self.chineseNumbers(1)[0]
            #expect(try await gate.reserve(phone: number).allowed)
            let denied = try await gate.reserve(phone: number, idempotencyKey: "k")
            #expect(denied.reason == .cooldown)
            let client = try redis.client()
            try client.command("CONFIG", "RESETSTAT")
            let replay = try await gate.reserve(phone: number, idempotencyKey: "k")
            #expect(replay.replayed && replay.reason == .cooldown)
            let stats = try #require(try client.command("INFO", "commandstats").string)
            // One script call, besides the gate's own reads of the window registry (one HGETALL
            // each, every 5 s: one may land here on a loaded machine).
            #expect(commandCalls("evalsha", in: stats) == 1 + commandCalls("hgetall", in: stats), "\(stats)")
            #expect(try await Self.counted(client, "rg:budget:*", settlingAt: 1) == 1)
        }
    }

    @Test func aPurposeWithItsOwnBudgetCountsApartFromTheSharedOne() async throws {
        let file = #"""
            {"default": {"max_sends_total": "2/1h"},
             "purposes": {"login": {"country_max_sends": {"CN": "1/1h"}}}}
            """#
        let policies = try PolicySet.parse(json: Data(file.utf8), base: Policy(ladder: [.seconds(60)]), plainPurposes: ["signup"])
        try await withRedis { redis in
            let gate = Gate(configuration: try GateConfiguration(
                redis: try .init(url: redis.url), policies: policies, defaultRegion: "CN"))
            let numbers = Self.chineseNumbers(4)
            // default and signup share the total; login inherits it and adds its own CN budget.
            #expect(try await gate.reserve(phone: numbers[0], purpose: "default").allowed)
            #expect(try await gate.reserve(phone: numbers[1], purpose: "login").allowed)
            #expect(try await gate.reserve(phone: numbers[2], purpose: "login").reason == .countryLimit)
            #expect(try await gate.reserve(phone: numbers[3], purpose: "signup").reason == .globalLimit)
            let client = try redis.client()
            #expect(try Self.counted(client, "rg:budget:{login:CN:*}") == 1)
            #expect(try Self.counted(client, "rg:budget:{\\*:total:*}") == 2)
        }
    }

    @Test func withoutABudgetASendIsStillOneSet() async throws {
        try await withLiveGate { redis, gate async throws in
            let client = try redis.client()
            _ = try client.command("CONFIG", "RESETSTAT")
            #expect(try await gate.reserve(phone: number).allowed)
            let stats = try #require(try client.command("INFO", "commandstats").string)
            let commands = stats.split(separator: "\n").filter { $0.hasPrefix("cmdstat_") }.map { $0.prefix { $0 != ":" } }
            // The token secret's first read aside, the send is one SET.
            #expect(!commands.contains("cmdstat_evalsha") && !commands.contains("cmdstat_zadd"), "\(commands)")
            #expect(stats.contains("cmdstat_set:calls=1,") || stats.contains("cmdstat_set:calls=2,"), "\(stats)")
        }
    }
}
