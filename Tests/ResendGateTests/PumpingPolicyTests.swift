import Foundation
@testable import RedisClient
@testable import ResendGate
import GateRuntime
import Testing

/// The pumping guard's settings (issue 15, items 3 and 8): flags and policy-file keys
/// per purpose, each figure that cannot work refused with its field named, and the
/// prefix a number belongs to.
@Suite("Pumping guard: policy, lint, prefixes")
struct PumpingPolicyTests {
    private func parseError(_ json: String) -> ConfigurationError? {
        do {
            _ = try PolicySet.parse(json: Data(json.utf8), base: .default)
            return nil
        } catch {
            return error
        }
    }

    @Test func offByDefaultWithConservativeFigures() throws {
        let guardFigures = Policy.default.pumping
        #expect(!guardFigures.isOn && guardFigures.minSends == nil)
        #expect(guardFigures.window == .seconds(3600) && guardFigures.minConversion == 0.1)
        #expect(guardFigures.prefixDigits == 4 && guardFigures.trustedFor == .seconds(30 * 86_400))
        #expect(guardFigures.bucketMilliseconds == 360_000)
        #expect(guardFigures.minConversionPartsPerMillion == 100_000)
    }

    @Test func perPurposeInThePolicyFile() throws {
        let set = try PolicySet.parse(json: Data("""
            {"default": {"pumping_min_sends": 50},
             "purposes": {"signup": {"pumping_min_sends": 20, "pumping_window": "30m", "pumping_min_conversion": "25%",
                                     "prefix_digits": 3, "trusted_for": "7d"},
                          "login": {"pumping_min_conversion": 0.05},
                          "reset": {"pumping_min_sends": null}}}
            """.utf8), base: .default)
        let signup = try #require(set.purposes["signup"]).pumping
        #expect(signup == PumpingGuard(minSends: 20, window: .seconds(1800), minConversion: 0.25, prefixDigits: 3, trustedFor: .seconds(7 * 86_400)))
        let login = try #require(set.purposes["login"]).pumping
        #expect(login.minSends == 50 && login.minConversion == 0.05 && login.window == .seconds(3600))
        #expect(set.purposes["reset"]?.pumping.isOn == false)
        #expect(set.fallback.pumping.minSends == 50)
    }

    @Test(arguments: [
        (#"{"purposes": {"signup": {"pumping_min_sends": 0}}}"#, "purposes.signup.pumping-min-sends"),
        (#"{"purposes": {"signup": {"pumping_min_sends": 1.5}}}"#, "purposes.signup.pumping_min_sends"),
        (#"{"purposes": {"signup": {"pumping_min_conversion": 0}}}"#, "purposes.signup.pumping_min_conversion"),
        (#"{"purposes": {"signup": {"pumping_min_conversion": "150%"}}}"#, "purposes.signup.pumping_min_conversion"),
        (#"{"purposes": {"signup": {"pumping_min_conversion": "a lot"}}}"#, "purposes.signup.pumping_min_conversion"),
        (#"{"purposes": {"signup": {"pumping_window": "5ms"}}}"#, "purposes.signup.pumping-window"),
        (#"{"purposes": {"signup": {"pumping_window": "soon"}}}"#, "purposes.signup.pumping_window"),
        (#"{"purposes": {"signup": {"prefix_digits": 13}}}"#, "purposes.signup.prefix-digits"),
        (#"{"purposes": {"signup": {"prefix_digits": null}}}"#, "purposes.signup.prefix_digits"),
        (#"{"purposes": {"signup": {"trusted_for": "0s"}}}"#, "purposes.signup.trusted_for"),
        // Issue 23, finding 4: a mark shorter than the window forgot that its number had
        // counted, so one number reported every second counted every second.
        (#"{"purposes": {"signup": {"pumping_min_sends": 20, "pumping_window": "1h", "trusted_for": "1s"}}}"#,
         "purposes.signup.trusted-for"),
        (#"{"default": {"pumping_min_sends": -1}}"#, "default.pumping-min-sends"),
        (#"{"purposes": {"signup": {"pumping_guard": true}}}"#, "purposes.signup.pumping_guard"),
    ])
    func policyFileMistakesNameTheirField(json: String, field: String) {
        let error = parseError(json)
        #expect(error?.field == field, "\(String(describing: error))")
    }

    @Test func conversionsAsFractionsOrPercentages() throws {
        #expect(try PumpingGuard.parseConversion("0.1") == 0.1)
        #expect(try PumpingGuard.parseConversion("10%") == 0.1)
        #expect(try PumpingGuard.parseConversion(" 12.5 % ") == 0.125)
        #expect(try PumpingGuard.parseConversion("1") == 1)
        for bad in ["0", "0%", "-0.1", "1.01", "", "%", "1e-1", "ten"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try PumpingGuard.parseConversion(bad) }
        }
        #expect(PumpingGuard.formatConversion(0.1) == "10%" && PumpingGuard.formatConversion(0.125) == "12.5%")
    }

    @Test func aPrefixIsTheCallingCodeAndTheFirstNationalDigits() throws {
        let uk = try PhoneNumber(parsing: "+447911123456")
        #expect(PrefixKey(uk, digits: 4) == PrefixKey(text: "+447911", callingCode: 44))
        #expect(PrefixKey(uk, digits: 0).text == "+44")
        // Issue 23, finding 5: a prefix never holds a whole number, however many digits
        // are asked for or however short the number.
        #expect(PrefixKey(uk, digits: 12).text == "+4479111234")
        let tokelau = try PhoneNumber(parsing: "+6907290")
        #expect(PrefixKey(tokelau, digits: 4).text == "+69072" && PrefixKey(tokelau, digits: 4).callingCode == 690)
        let us = try PhoneNumber(parsing: "+16502530000")
        #expect(PrefixKey(us, digits: 3).text == "+1650" && PrefixKey(us, digits: 3).callingCode == 1)
        let keys = GateKeys(prefix: "rg")
        let signup = try Purpose("signup")
        #expect(keys.pumping(purpose: signup, prefix: PrefixKey(uk, digits: 4)) == "rg:pump:{signup:+447911}")
        #expect(keys.blockedPrefixes == "rg:pump:blocked")
        var arguments = RedisArguments()
        keys.appendPumping(purpose: signup, prefix: PrefixKey(uk, digits: 4), to: &arguments)
        var expected = RedisArguments()
        expected.append("rg:pump:{signup:+447911}")
        #expect(arguments.bytes == expected.bytes)
        // On a cluster the key lives in the slot its calls are routed by.
        #expect(ClusterSlot.of(keys.pumping(purpose: signup, prefix: PrefixKey(uk, digits: 4)))
            == ClusterSlot.of(keys.prefixSlotKey(purpose: signup, prefix: PrefixKey(uk, digits: 4))))
        #expect(PrefixRegistry.member(purpose: signup, prefix: PrefixKey(uk, digits: 4)) == "signup:+447911:44")
        // A registry member that does not name a prefix of its calling code is no prefix.
        #expect(PrefixKey(text: "+447911", callingCode: 86) == nil)
        #expect(PrefixKey(text: "447911", callingCode: 44) == nil)
        #expect(PrefixKey(text: "+44x911", callingCode: 44) == nil)
    }
}
