import Foundation
import GateRuntime
import RedisClient
import ResendGate
import Testing

/// Issue 15, items 4, 5 and 8: budgets and observe mode in the flags' syntax and in policy
/// files, each mistake refused at start with its field named.
@Suite("Budgets and observe mode in policies")
struct BudgetPolicyTests {
    private func parse(_ json: String) throws(ConfigurationError) -> PolicySet {
        try PolicySet.parse(json: Data(json.utf8), base: .default, plainPurposes: ["signup"])
    }

    @Test func theFlagsSyntaxReadsRegionsAndTheTotal() throws {
        let regions = try SendBudget.parseRegions("CN=50000/24h, gb=2000/1h", field: "country-max-sends")
        #expect(regions == ["CN": SendBudget(limit: 50_000, window: .seconds(86_400)), "GB": SendBudget(limit: 2000, window: .seconds(3600))])
        #expect(try SendBudget.parse("100000/24h", field: "max-sends-total") == SendBudget(limit: 100_000, window: .seconds(86_400)))
        #expect(try SendBudget.parseRegions("", field: "country-max-sends").isEmpty)
        #expect(try SendBudget.parseRegions("+44=2000/24h,+1=5/1h", field: "country-max-sends").keys.sorted() == ["+1", "+44"])
        #expect(try Policy.parseObserve("country_limit, global_limit") == [.countryLimit, .globalLimit])
    }

    @Test(arguments: [
        "CN", "CN=", "CN=50000", "CN=x/24h", "CN=0/24h", "CN=-1/24h", "CN=10000001/24h", "CN=5/0s", "CN=5/soon",
        "XX=5/1h", "CN=5/1h,CN=6/1h", "+=5/1h", "+0=5/1h", "+1234=5/1h", "+4a=5/1h", "44=5/1h",
    ])
    func aBadRegionBudgetIsRefusedNamingTheFlag(text: String) {
        #expect(configurationError { () throws(ConfigurationError) in _ = try SendBudget.parseRegions(text, field: "country-max-sends") }?.field
            == "country-max-sends", "\(text)")
    }

    @Test func anUnknownRuleIsRefusedNamingTheKnownOnes() throws {
        let refused = try #require(configurationError { () throws(ConfigurationError) in _ = try Policy.parseObserve("country_limit,pumping") })
        #expect(refused.field == "observe")
        #expect(refused.message.contains("\"pumping\""))
        for reason in Decision.Reason.allCases { #expect(refused.message.contains(reason.rawValue)) }
    }

    @Test func aShardsAllowancesAddUpToTheBudget() {
        for limit in [1, 2, 7, 8, 9, 23, 50_000, 100_003] {
            let budget = SendBudget(limit: limit, window: .seconds(60))
            #expect(budget.shards == min(limit, 8))
            let allowances = (0..<budget.shards).map(budget.allowance(ofShard:))
            #expect(allowances.reduce(0, +) == limit, "\(limit)")
            #expect(allowances.allSatisfy { $0 >= 1 && $0 >= limit / 8 && $0 <= limit / 8 + 1 }, "\(limit): \(allowances)")
        }
    }

    @Test func aPurposesOwnBudgetCountsApartAndTheDefaultsIsShared() throws {
        let set = try parse(#"""
            {"default": {"max_sends_total": "1000/24h", "country_max_sends": {"CN": "100/1h"}},
             "purposes": {"login": {"country_max_sends": {"gb": "5/10m"}, "observe": ["global_limit"]},
                          "reset": {"max_sends_total": null, "country_max_sends": null}}}
            """#)
        #expect(set.fallback.maxSendsTotal == SendBudget(limit: 1000, window: .seconds(86_400), scope: ""))
        #expect(set.fallback.countryMaxSends == ["CN": SendBudget(limit: 100, window: .seconds(3600), scope: "")])
        let login = try #require(set.purposes["login"])
        #expect(login.countryMaxSends == ["GB": SendBudget(limit: 5, window: .seconds(600), scope: "login")])
        #expect(login.maxSendsTotal == set.fallback.maxSendsTotal)
        #expect(login.observes(.globalLimit) && !login.observes(.countryLimit))
        #expect(!set.fallback.observes(.globalLimit))
        let reset = try #require(set.purposes["reset"])
        #expect(!reset.hasBudgets)
        #expect(!Policy.default.hasBudgets && Policy.default.observe.isEmpty)
    }

    @Test(arguments: [
        (#"{"purposes": {"login": {"country_max_sends": {"XX": "5/1h"}}}}"#, "purposes.login.country_max_sends.XX"),
        (#"{"purposes": {"login": {"country_max_sends": {"CN": "0/1h"}}}}"#, "purposes.login.country_max_sends.CN"),
        (#"{"purposes": {"login": {"country_max_sends": {"CN": 5}}}}"#, "purposes.login.country_max_sends.CN"),
        (#"{"purposes": {"login": {"country_max_sends": "CN=5/1h"}}}"#, "purposes.login.country_max_sends"),
        (#"{"default": {"max_sends_total": "lots"}}"#, "default.max_sends_total"),
        (#"{"default": {"max_sends_total": 100}}"#, "default.max_sends_total"),
        (#"{"default": {"max_sends_total": "5/0ms"}}"#, "default.max_sends_total"),
        (#"{"purposes": {"login": {"observe": ["country_limit", "nope"]}}}"#, "purposes.login.observe"),
        (#"{"purposes": {"login": {"observe": ["too_many_requests"]}}}"#, "purposes.login.observe"),
        (#"{"purposes": {"login": {"observe": "country_limit"}}}"#, "purposes.login.observe"),
    ] as [(String, String)])
    func aBadPolicyFileBudgetIsRefusedNamingTheField(json: String, field: String) {
        #expect(configurationError { () throws(ConfigurationError) in _ = try parse(json) }?.field == field, "\(json)")
    }

    @Test func lintRefusesABudgetBuiltInCode() {
        var policy = Policy.default
        policy.countryMaxSends = ["ZZ": SendBudget(limit: 5, window: .seconds(60))]
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint(where: "purposes.x.") }?.field
            == "purposes.x.country-max-sends")
        policy.countryMaxSends = [:]
        policy.maxSendsTotal = SendBudget(limit: 0, window: .seconds(60))
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint() }?.field == "max-sends-total")
    }
}
