import Foundation
import GateRuntime
import RedisClient
import ResendGate
import Testing

/// `Policy.lint` and `PolicySet.parse`: every rule that cannot work is refused before the
/// gate starts, with the field that is wrong named exactly.
@Suite("Policy lint and policy files")
struct PolicyLintTests {
    private func parseError(_ json: String, base: Policy = .default) -> ConfigurationError? {
        configurationError { () throws(ConfigurationError) in _ = try PolicySet.parse(json: Data(json.utf8), base: base) }
    }

    // MARK: - Policy.lint

    @Test func theDefaultPolicyAndSensiblePoliciesPass() throws {
        try Policy.default.lint()
        try Policy(ladder: [.seconds(60), .seconds(120), .seconds(300)], window: .seconds(86_400), maxSends: 5).lint()
        try Policy(ladder: [.milliseconds(1)], window: .milliseconds(1), ipMaxSends: 1, ipWindow: .milliseconds(1)).lint()
        try Policy(allowedRegions: ["CN", "GB"], allowedNumberTypes: [.premiumRate]).lint()
        #expect(Policy.default.ladder == [.seconds(60)])
        #expect(Policy.default.window == .seconds(86_400))
        #expect(Policy.default.maxSends == nil)
        #expect(Policy.default.ipMaxSends == nil)
        #expect(Policy.default.ipWindow == .seconds(3600))
        #expect(Policy.default.allowedRegions == nil)
        #expect(Policy.default.allowedNumberTypes == [.mobile, .fixedLineOrMobile])
    }

    @Test(arguments: [
        (Policy(ladder: []), "cooldown"),
        (Policy(ladder: [.seconds(1), .zero]), "cooldown"),
        (Policy(ladder: [.microseconds(999)]), "cooldown"),
        (Policy(ladder: [.seconds(-1)]), "cooldown"),
        (Policy(ladder: Array(repeating: .seconds(1), count: Policy.maxLadderSteps + 1)), "cooldown"),
        (Policy(window: .zero), "window"),
        (Policy(window: .seconds(-2)), "window"),
        (Policy(ipWindow: .zero), "ip-window"),
        (Policy(maxSends: 0), "max-sends"),
        (Policy(maxSends: -3), "max-sends"),
        (Policy(ipMaxSends: 0), "ip-max-sends"),
        (Policy(ipMaxSends: -1), "ip-max-sends"),
        (Policy(allowedRegions: ["CN", "XX"]), "allow-regions"),
        (Policy(allowedRegions: ["cn"]), "allow-regions"),
        (Policy(allowedNumberTypes: []), "allow-number-types"),
    ] as [(Policy, String)])
    func lintNamesTheField(policy: Policy, field: String) {
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint() }?.field == field)
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint(where: "purposes.login.") }?.field
            == "purposes.login." + field)
    }

    /// An empty allow-list would refuse every number of the purpose: a rule that cannot work.
    @Test func anEmptyRegionAllowListIsRefused() {
        let error = configurationError { () throws(ConfigurationError) in try Policy(allowedRegions: []).lint() }
        #expect(error?.field == "allow-regions")
    }

    /// The last of `maxSends` sends comes after the cooldowns of the ones before it; if those
    /// fill the window, the cap can never be reached and the rule is a mistake.
    @Test func maxSendsMustFitIntoTheWindow() throws {
        // 1 s + 1 s before the 3rd send: 2 s does not fit into a 2 s window, 1 s does.
        try Policy(ladder: [.seconds(1)], window: .seconds(2), maxSends: 2).lint()
        let tooMany = configurationError { () throws(ConfigurationError) in
            try Policy(ladder: [.seconds(1)], window: .seconds(2), maxSends: 3).lint(where: "purposes.login.")
        }
        #expect(tooMany?.field == "purposes.login.max-sends")
        #expect(tooMany?.message.contains("3 sends cannot fit") == true, "\(String(describing: tooMany))")
        // The ladder's own steps count, the last repeating: 1 + 5 + 5 = 11 s before the 4th.
        try Policy(ladder: [.seconds(1), .seconds(5)], window: .milliseconds(11_001), maxSends: 4).lint()
        #expect(configurationError { () throws(ConfigurationError) in
            try Policy(ladder: [.seconds(1), .seconds(5)], window: .seconds(11), maxSends: 4).lint()
        }?.field == "max-sends")
        // One send always fits.
        try Policy(ladder: [.seconds(3600)], window: .seconds(1), maxSends: 1).lint()
    }

    @Test func policySetLintNamesThePurpose() {
        let set = PolicySet(purposes: ["signup": Policy(maxSends: 0)])
        let error = configurationError { () throws(ConfigurationError) in try set.lint() }
        #expect(error?.field == "purposes.signup.max-sends")
        let badName = PolicySet(purposes: ["Login": .default])
        let nameError = configurationError { () throws(ConfigurationError) in try badName.lint() }
        #expect(nameError?.field == "policy")
        #expect(nameError?.message.contains("purposes.Login") == true, "\(String(describing: nameError))")
    }

    @Test func gateConfigurationLintsItsPolicies() throws {
        let redis = try RedisConfiguration(url: "redis://127.0.0.1:1/0")
        let error = configurationError { () throws(ConfigurationError) in
            _ = try GateConfiguration(redis: redis, policies: PolicySet(purposes: ["login": Policy(ipMaxSends: 0)]))
        }
        #expect(error?.field == "purposes.login.ip-max-sends")
        let secret = configurationError { () throws(ConfigurationError) in
            _ = try GateConfiguration(redis: redis, keySecret: "fifteen-chars!!")
        }
        #expect(secret?.field == "key-secret")
        // The library names the field; only the command line writes it as a flag.
        #expect(secret?.description == "key-secret: must be at least 16 characters")
        #expect(error?.description.hasPrefix("policy file, purposes.login.ip-max-sends: ") == true, "\(String(describing: error))")
        _ = try GateConfiguration(redis: redis, keySecret: "sixteen-chars!!!")
    }

    // MARK: - Flag helpers

    @Test func ladderRegionsAndNumberTypesFromText() throws {
        #expect(try Policy.parseLadder("60,120,300") == [.seconds(60), .seconds(120), .seconds(300)])
        #expect(try Policy.parseLadder("250ms") == [.milliseconds(250)])
        #expect(configurationError { () throws(ConfigurationError) in _ = try Policy.parseLadder("60,,300") }?.field == "cooldown")
        #expect(configurationError { () throws(ConfigurationError) in _ = try Policy.parseLadder("0") }?.field == "cooldown")
        #expect(Policy.parseRegions(" cn, GB ,") == ["CN", "GB"])
        #expect(try Policy.parseNumberTypes("premium_rate, mobile") == [.premiumRate, .mobile])
        let unknown = configurationError { () throws(ConfigurationError) in _ = try Policy.parseNumberTypes("mobile,landline") }
        #expect(unknown?.field == "allow-number-types")
        #expect(unknown?.message.contains("\"landline\"") == true)
    }

    // MARK: - PolicySet.parse

    @Test func purposesStartFromTheDefaultWhichStartsFromTheFlags() throws {
        let base = Policy(ladder: [.seconds(60)], ipMaxSends: 100)
        let set = try PolicySet.parse(json: Data("""
            {"default": {"cooldown": "30s", "window": "1h"},
             "purposes": {
               "login": {"cooldown": "1s,2s", "max_sends": 3, "max_refunds": 0},
               "signup": {"cooldown": 5, "ip_max_sends": null, "ip_window": "10m",
                          "allow_regions": ["cn", "GB"], "allow_number_types": ["premium_rate", "mobile"]}}}
            """.utf8), base: base)
        #expect(set.fallback == Policy(ladder: [.seconds(30)], window: .seconds(3600), ipMaxSends: 100))
        #expect(set.purposes["login"] == Policy(
            ladder: [.seconds(1), .seconds(2)], window: .seconds(3600), maxSends: 3, ipMaxSends: 100, maxRefunds: 0))
        #expect(set.fallback.maxRefunds == 1, "one refund a window by default")
        #expect(set.purposes["signup"] == Policy(
            ladder: [.seconds(5)], window: .seconds(3600), ipMaxSends: nil, ipWindow: .seconds(600),
            allowedRegions: ["CN", "GB"], allowedNumberTypes: [.premiumRate, .mobile]))
        #expect(set.policy(for: try Purpose("login")) == set.purposes["login"])
        #expect(set.policy(for: try Purpose("reset")) == set.fallback)
        // An empty file object changes nothing.
        #expect(try PolicySet.parse(json: Data("{}".utf8), base: base) == PolicySet(fallback: base))
    }

    /// JSON 0 and 1 are numbers, not booleans (on Linux an NSNumber of 0 or 1 casts to Bool).
    @Test func oneIsANumberAndTrueIsNot() throws {
        let set = try PolicySet.parse(json: Data(#"{"default": {"cooldown": 1, "window": 1, "max_sends": 1, "ip_max_sends": 1, "ip_window": 1}}"#.utf8), base: .default)
        #expect(set.fallback == Policy(ladder: [.seconds(1)], window: .seconds(1), maxSends: 1, ipMaxSends: 1, ipWindow: .seconds(1)))
        #expect(parseError(#"{"default": {"max_sends": true}}"#)?.field == "default.max_sends")
        #expect(parseError(#"{"default": {"window": false}}"#)?.field == "default.window")
    }

    @Test(arguments: [
        // Not a policy file at all.
        (#"not json"#, "policy"),
        (#"[1, 2]"#, "policy"),
        (#"{"defaults": {}}"#, "policy"),
        (#"{"purposes": []}"#, "policy"),
        (#"{"purposes": {"Login": {}}}"#, "policy"),
        (#"{"purposes": {"login": 5}}"#, "purposes.login"),
        (#"{"default": "60s"}"#, "default"),
        // Unknown fields.
        (#"{"purposes": {"login": {"cooldwn": "60s"}}}"#, "purposes.login.cooldwn"),
        (#"{"default": {"max-sends": 3}}"#, "default.max-sends"),
        // Zero, negative and malformed durations.
        (#"{"purposes": {"login": {"cooldown": "0s"}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"cooldown": "60,0"}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"cooldown": 0}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"cooldown": "-1s"}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"cooldown": -5}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"cooldown": true}}}"#, "purposes.login.cooldown"),
        (#"{"purposes": {"login": {"window": "0ms"}}}"#, "purposes.login.window"),
        (#"{"purposes": {"login": {"window": "2 weeks"}}}"#, "purposes.login.window"),
        (#"{"purposes": {"login": {"ip_window": "-1h"}}}"#, "purposes.login.ip_window"),
        (#"{"purposes": {"login": {"ip_window": null}}}"#, "purposes.login.ip_window"),
        // Counts.
        (#"{"purposes": {"login": {"max_sends": 0}}}"#, "purposes.login.max-sends"),
        (#"{"purposes": {"login": {"max_sends": -2}}}"#, "purposes.login.max-sends"),
        (#"{"purposes": {"login": {"max_sends": 2.5}}}"#, "purposes.login.max_sends"),
        (#"{"purposes": {"login": {"max_sends": "3"}}}"#, "purposes.login.max_sends"),
        (#"{"purposes": {"login": {"ip_max_sends": 0}}}"#, "purposes.login.ip-max-sends"),
        (#"{"purposes": {"login": {"max_refunds": -1}}}"#, "purposes.login.max-refunds"),
        (#"{"purposes": {"login": {"max_refunds": null}}}"#, "purposes.login.max_refunds"),
        (#"{"purposes": {"login": {"max_refunds": true}}}"#, "purposes.login.max_refunds"),
        (#"{"purposes": {"login": {"ip_max_sends": false}}}"#, "purposes.login.ip_max_sends"),
        // A ladder that cannot fit max-sends into the window: 1 s + 2 s + 2 s before the 4th send.
        (#"{"purposes": {"login": {"cooldown": "1s,2s", "window": "5s", "max_sends": 4}}}"#, "purposes.login.max-sends"),
        // Unknown regions and number types.
        (#"{"purposes": {"login": {"allow_regions": ["CN", "XX"]}}}"#, "purposes.login.allow-regions"),
        (#"{"purposes": {"login": {"allow_regions": "CN"}}}"#, "purposes.login.allow_regions"),
        (#"{"purposes": {"login": {"allow_regions": []}}}"#, "purposes.login.allow-regions"),
        (#"{"purposes": {"login": {"allow_number_types": ["mobile", "landline"]}}}"#, "purposes.login.allow_number_types"),
        (#"{"purposes": {"login": {"allow_number_types": []}}}"#, "purposes.login.allow-number-types"),
        // The default section's own rules are named as the default's.
        (#"{"default": {"max_sends": 0}}"#, "default.max-sends"),
        (#"{"default": {"cooldown": "1s", "window": "1s", "max_sends": 2}}"#, "default.max-sends"),
        (#"{"default": {"allow_regions": ["ZZ"]}}"#, "default.allow-regions"),
    ])
    func parseRefusesWithTheFieldNamed(json: String, field: String) {
        let error = parseError(json)
        #expect(error?.field == field, "\(json): \(String(describing: error))")
        #expect(error?.message.isEmpty == false)
    }

    /// A purpose inherits a bad flag from the base: the purpose that carries it is named,
    /// and with no file the flag itself is.
    @Test func aBadBaseIsNamedWhereItIsUsed() {
        let base = Policy(ladder: [.seconds(1)], window: .seconds(1), maxSends: 2)
        #expect(parseError(#"{"purposes": {"login": {"window": "10s"}}}"#, base: base)?.field == "max-sends")
        #expect(configurationError { () throws(ConfigurationError) in try PolicySet(fallback: base).lint() }?.field == "max-sends")
    }
}
