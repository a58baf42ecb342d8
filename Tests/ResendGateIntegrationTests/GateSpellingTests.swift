import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// Issue 23, finding 1: every per-number rule holds through every spelling of a number.
/// `+014155552671` used to be a second number (its own cooldown, ladder, refunds, lockout,
/// trust and prefix); now it is refused, and each other spelling meets the rules the first
/// one started.
@Suite("Gate: every rule through a second spelling")
struct GateSpellingTests {
    static let canonical = "+14155552671"
    /// (text, region) pairs that all name `canonical`.
    static let spellings: [(String, String?)] = [
        ("+1 415-555-2671", nil), ("(415) 555-2671", "US"), ("001 415 555 2671", "GB"), ("011 1 415 555 2671", "US"),
        ("\u{FF0B}\u{FF11}\u{FF14}\u{FF11}\u{FF15}\u{FF15}\u{FF15}\u{FF15}\u{FF12}\u{FF16}\u{FF17}\u{FF11}", nil), ("+1.415.555.2671", nil),
    ]

    /// A zero before the calling code is refused, or, where libphonenumber reads `+00` as
    /// the region's international prefix (00 from China), it is the same number: never a
    /// key of its own.
    @Test func spellingsWithAZeroBeforeTheCallingCodeAreNeverASecondKey() async throws {
        try await withLiveGate { redis, gate async throws in
            for region in [nil, "CN", "US"] {
                for (text, key) in [("+014155552671", "+14155552671"), ("+0014155552671", "+14155552671"), ("+08613800138000", "+8613800138000")] {
                    do throws(GateError) {
                        let decision = try await gate.reserve(phone: text, region: region)
                        #expect(decision.phone.e164 == key, "\(text) in \(String(describing: region))")
                    } catch {
                        #expect(error.phoneError == .invalidCountryCode, "\(text) in \(String(describing: region)): \(error)")
                    }
                }
            }
            // "+0014155552671" read in China is +1 415 555 2671: its only key is that number's.
            let keys = try redis.client().keys("rg:{*")
            #expect(keys == [cooldownKey("+14155552671")], "\(keys)")
        }
    }

    @Test func theCooldownLadderAndMaxSendsHoldThroughEverySpelling() async throws {
        let policy = Policy(ladder: [.seconds(60), .seconds(120)], window: .seconds(3600), maxSends: 2)
        try await withLiveGate(policy: policy) { redis, gate async throws in
            let first = try await gate.reserve(phone: Self.canonical)
            #expect(first.allowed)
            for (text, region) in Self.spellings {
                let again = try await gate.reserve(phone: text, region: region)
                #expect(again.reason == .cooldown && again.countdownToken == first.countdownToken && again.phone.e164 == Self.canonical, "\(text)")
            }
            // The second send, through another spelling, takes the ladder's second step.
            try redis.client().runOut(cooldownKey(Self.canonical))
            let second = try await gate.reserve(phone: "(415) 555-2671", region: "US")
            #expect(second.allowed && second.retryAfterMilliseconds > 60_000 && second.sendsLeft == 0)
            // That send filled the window: its wait is the window's, and max_sends binds.
            #expect(try await gate.reserve(phone: "001 415 555 2671", region: "GB").reason == .maxSends)
        }
    }

    @Test func refundsCountThroughEverySpelling() async throws {
        try await withLiveGate(policy: Policy(ladder: [.seconds(60)], maxRefunds: 1)) { _, gate async throws in
            #expect(try await gate.reserve(phone: Self.canonical).allowed)
            #expect(try await gate.release(phone: "+1 415-555-2671"))
            #expect(try await gate.reserve(phone: "(415) 555-2671", region: "US").allowed)
            let second = await gateError { () async throws(GateError) in try await gate.release(phone: "001 415 555 2671", region: "GB") }
            #expect(second?.kind == .refundLimit)
        }
    }

    @Test func wrongCodesCountThroughEverySpellingForTheCodeAndTheNumber() async throws {
        for scope in LockoutScope.allCases {
            let policy = Policy(ladder: [.seconds(60)], maxFailedChecks: Self.spellings.count, lockoutScope: scope)
            try await withLiveGate(policy: policy) { _, gate async throws in
                #expect(try await gate.reserve(phone: Self.canonical).allowed)
                for (index, (text, region)) in Self.spellings.dropLast().enumerated() {
                    let left = try await gate.verify(phone: text, region: region, outcome: .failed).attemptsLeft
                    #expect(left == Self.spellings.count - index - 1, "\(text)")
                }
                let (last, region) = try #require(Self.spellings.last)
                let locked = await gateError { () async throws(GateError) in try await gate.verify(phone: last, region: region, outcome: .failed) }
                #expect(locked?.kind == (scope == .code ? .codeLocked : .locked), "\(scope)")
                let send = try await gate.reserve(phone: "+1 415 555 2671")
                #expect(send.reason == (scope == .code ? .cooldown : .locked), "\(scope)")
            }
        }
    }

    @Test func trustAndThePrefixAreOneThroughEverySpelling() async throws {
        let policy = Policy(ladder: [.seconds(60)], pumping: PumpingGuard(minSends: 3, window: .seconds(3600), minConversion: 0.5))
        try await withLiveGate(policy: policy) { redis, gate async throws in
            // Three sends to the prefix +14155 under three spellings of three numbers.
            #expect(try await gate.reserve(phone: "(415) 555-2670", region: "US").allowed)
            #expect(try await gate.reserve(phone: "+1.415.555.2672").allowed)
            #expect(try await gate.reserve(phone: "011 1 415 555 2673", region: "US").allowed)
            let counts = try redis.client().command("HGETALL", "rg:pump:{default:+14155}")
            guard case .array(let items) = counts else { Issue.record("\(counts)"); return }
            #expect(items.count == 2 && items[1].string == "3", "\(items)")
            // The prefix is blocked; a number verified under one spelling passes under another.
            #expect(try await gate.reserve(phone: Self.canonical).reason == .suspectedPumping)
            _ = try await gate.verify(phone: "001 415 555 2671", region: "GB", outcome: .verified)
            #expect(try await gate.reserve(phone: "\u{FF0B}\u{FF11}\u{FF14}\u{FF11}\u{FF15}\u{FF15}\u{FF15}\u{FF15}\u{FF12}\u{FF16}\u{FF17}\u{FF11}").allowed)
        }
    }
}
