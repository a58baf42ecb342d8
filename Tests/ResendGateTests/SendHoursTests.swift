import Foundation
import GateRuntime

import ResendGate
import Testing

/// Issue 36: a rule that is not a counter (`SendHours`), held to a minute-by-minute
/// reference on generated windows and offsets.
@Suite("Policy: send hours, a rule that is not a counter")
struct SendHoursTests {
    static let number = try! PhoneNumber(parsing: "+8613800138000")

    static func refusal(_ text: String, at milliseconds: Int64) throws -> RuleRefusal? {
        try SendHours(parsing: text, field: "send-hours")
            .refusal(of: RuleInput(number: number, purpose: "default", nowMilliseconds: milliseconds))
    }

    @Test func aWindowLetsSendsInAndRefusesUntilItBegins() throws {
        let day: Int64 = 86_400_000, base = 20_000 * day  // a midnight UTC
        #expect(try Self.refusal("08:00-21:00", at: base + 8 * 3_600_000) == nil)
        #expect(try Self.refusal("08:00-21:00", at: base + 21 * 3_600_000 - 1) == nil)
        #expect(try Self.refusal("08:00-21:00", at: base + 21 * 3_600_000) == RuleRefusal(reason: .outsideSendHours, waitMilliseconds: 11 * 3_600_000))
        #expect(try Self.refusal("08:00-21:00", at: base + 8 * 3_600_000 - 30_000)?.waitMilliseconds == 30_000)
        // Across midnight, and at an offset: 08:00-21:00 at +08:00 is 00:00-13:00 UTC.
        #expect(try Self.refusal("22:00-06:00", at: base + 2 * 3_600_000) == nil)
        #expect(try Self.refusal("22:00-06:00", at: base + 12 * 3_600_000)?.waitMilliseconds == 10 * 3_600_000)
        #expect(try Self.refusal("08:00-21:00+08:00", at: base + 12 * 3_600_000) == nil)
        #expect(try Self.refusal("08:00-21:00+08:00", at: base + 13 * 3_600_000)?.waitMilliseconds == 11 * 3_600_000)
        // Before 1970 too (a clock gone wrong never crashes it).
        #expect(try Self.refusal("08:00-21:00", at: -day + 3_600_000)?.waitMilliseconds == 7 * 3_600_000)
    }

    @Test func itAgreesWithAMinuteByMinuteReferenceOnGeneratedWindows() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let from = Int.random(in: 0..<1440, using: &generator), to = (from + Int.random(in: 1..<1440, using: &generator)) % 1440
            let offset = Int.random(in: -14 * 60...14 * 60, using: &generator)
            let sign = offset < 0 ? "-" : "+"
            let text = String(format: "%02d:%02d-%02d:%02d%@%02d:%02d", from / 60, from % 60, to / 60, to % 60, sign, abs(offset) / 60, abs(offset) % 60)
            let minute = Int.random(in: 0..<1440, using: &generator)
            // The reference: walk local minutes from now until one is inside the window.
            let local = ((minute + offset) % 1440 + 1440) % 1440
            func inside(_ m: Int) -> Bool { from < to ? m >= from && m < to : m >= from || m < to }
            var wait = 0
            while !inside((local + wait) % 1440) { wait += 1 }
            let got = try Self.refusal(text, at: 19_000 * 86_400_000 + Int64(minute) * 60_000)
            #expect(got?.waitMilliseconds == (wait == 0 ? nil : Int64(wait) * 60_000), "\(text) at minute \(minute)")
        }
    }

    @Test(arguments: ["", "8:00-21:00", "08:00", "08:00-08:00", "24:00-06:00", "08:60-09:00", "08:00-21:00+15:00", "08:00-21:00 08:00", "08:00-21:00+0800", "-08:00-21:00"])
    func aWindowThatCannotWorkIsRefused(text: String) {
        #expect(throws: ConfigurationError.self) { try SendHours(parsing: text, field: "send-hours") }
    }

    @Test func aPolicyFileSetsItPerPurposeAndLintNamesItsField() throws {
        let set = try PolicySet.parse(json: Data(#"{"purposes": {"marketing": {"send_hours": "08:00-21:00"}, "login": {"send_hours": null}}}"#.utf8), base: .default)
        #expect(set.purposes["marketing"]?.ruleTexts == ["send-hours": "08:00-21:00"])
        #expect(set.purposes["login"]?.ruleTexts == [:])
        #expect(throws: ConfigurationError.self) {
            try PolicySet.parse(json: Data(#"{"default": {"send_hours": 8}}"#.utf8), base: .default)
        }
        var policy = Policy.default
        policy.ruleTexts["send-hours"] = "25:00-01:00"
        #expect(configurationError { () throws(ConfigurationError) in try policy.lint(where: "purposes.x.") }?.field == "purposes.x.send-hours")
    }
}
