import Foundation
import GateRuntime
import ResendGate
import Testing

/// Issue 36, item 1: a counted limit's spellings (`--limit`, a policy file's `limits`)
/// read into one `SendLimit`, and everything that cannot work refused naming its field.
@Suite("Policy: counted limits written as data")
struct SendLimitTests {
    @Test func theFlagsSpellingReadsEveryPartAndWritesItBack() throws {
        let limits = try SendLimit.parseList("login-day,per=purpose,sends=20000/24h; ip-number , per=ip+number , sends=3/1h,reason=max_sends,observe")
        #expect(limits == [
            SendLimit(name: "login-day", per: .purpose, budget: SendBudget(limit: 20_000, window: .seconds(86_400))),
            SendLimit(name: "ip-number", per: .ipNumber, budget: SendBudget(limit: 3, window: .seconds(3600)), reason: .maxSends, observe: true),
        ])
        #expect(limits[0].reason == .globalLimit && limits[0].budget.shards == 8)
        // A count of one number or IP is one key; a count many share is spread.
        #expect(limits[1].budget.shards == 1)
        #expect(try SendLimit.parseList(limits.map(\.text).joined(separator: ";")) == limits)
        #expect(try SendLimit.parseList("") == [])
        // A blank part is skipped, never read out of range.
        #expect(try SendLimit.parseList("login-day, ,per=purpose,, sends=20000/24h") == [limits[0]])
        for per in SendLimit.Per.allCases {
            let limit = try SendLimit.parse("x,per=\(per.rawValue),sends=9/1m")
            #expect(limit.reason == per.defaultReason && SendLimit.reasons.contains(limit.reason))
            #expect(limit.budget.shards == (per.spreads ? 8 : 1))
        }
    }

    @Test(arguments: [
        "login-day,per=purpose", "login-day,sends=5/1h", "login-day,per=planet,sends=5/1h", "Login,per=all,sends=5/1h",
        "a_b,per=all,sends=5/1h", "login-day,per=all,sends=0/1h", "login-day,per=all,sends=5/0ms", "x,per=all,sends=5/1h,reason=cooldown",
        "x,per=all,sends=5/1h,reason=nope", "x,per=all,sends=5/1h,colour=red", "x,per=all,sends=5/1h,observe=maybe",
        "total,per=all,sends=5/1h", "a,per=all,sends=5/1h;a,per=ip,sends=5/1h", String(repeating: "a", count: 33) + ",per=all,sends=5/1h",
    ])
    func aLimitThatCannotWorkIsRefused(text: String) {
        let error = configurationError { () throws(ConfigurationError) in _ = try SendLimit.parseList(text) }
        #expect(error?.field.hasPrefix("limit") == true, "\(text): \(String(describing: error))")
    }

    @Test func aPolicyFilesLimitsAreAPurposesOwnOrSharedFromTheDefault() throws {
        let set = try PolicySet.parse(json: Data(#"""
            {"default": {"limits": {"all-day": {"per": "all", "sends": "100/24h"}}},
             "purposes": {"login": {"limits": {"ip-number": {"per": "ip+number", "sends": "3/1h", "observe": true}}},
                          "reset": {"limits": null}}}
            """#.utf8), base: .default)
        #expect(set.fallback.limits == [SendLimit(name: "all-day", per: .all, budget: SendBudget(limit: 100, window: .seconds(86_400)))])
        let login = try #require(set.purposes["login"])
        #expect(login.limits == [SendLimit(
            name: "ip-number", per: .ipNumber, budget: SendBudget(limit: 3, window: .seconds(3600), scope: "login"), observe: true)])
        #expect(login.observes(login.limits[0]) && login.hasBudgets)
        #expect(try #require(set.purposes["reset"]).hasBudgets == false)
        for (json, field) in [
            (#"{"default": {"limits": [1]}}"#, "default.limits"),
            (#"{"default": {"limits": {"a": {"per": "all"}}}}"#, "default.limits.a"),
            (#"{"default": {"limits": {"a": {"per": "all", "sends": 5}}}}"#, "default.limits.a.sends"),
            (#"{"default": {"limits": {"total": {"per": "all", "sends": "5/1h"}}}}"#, "default.limit"),
        ] {
            let error = configurationError { () throws(ConfigurationError) in
                try PolicySet.parse(json: Data(json.utf8), base: .default).lint()
            }
            #expect(error?.field == field, "\(json): \(String(describing: error))")
        }
    }
}
