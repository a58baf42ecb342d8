import Foundation
import RedisClient
import ResendGate
import ResendGateTestSupport
import Testing

/// A simulated SMS-pumping attack (issue 15, item 3): a script requests codes for
/// numbers of one prefix and never verifies one, while normal users on other prefixes
/// verify four codes in five. Used against one Redis and against a Redis Cluster.
enum PumpingAttack {
    /// The guard the attack meets: judged from 20 sends, refused under 30 % conversion,
    /// over an hour (long, so that nothing ages out while a slow machine runs the test).
    static let guardFigures = PumpingGuard(minSends: 20, window: .seconds(3600), minConversion: 0.3)
    static let policy = Policy(ladder: [.seconds(60)], pumping: guardFigures)

    /// The attacked prefix and its numbers.
    static let attackedPrefix = "+447911"
    static func attacked(_ index: Int) -> String { "+447911\(String(format: "%06d", index))" }
    /// A number of the attacked prefix that verified before the attack (trusted).
    static let trustedNumber = "+447911123456"
    /// Normal users' prefixes, in two calling codes.
    static let normalPrefixes = ["+447912", "+447400", "+861390", "+861500"]
    static func normal(_ prefix: String, _ index: Int) -> String {
        prefix + String(format: prefix.hasPrefix("+86") ? "%07d" : "%06d", index)
    }

    struct Outcome {
        var attackAllowed = 0
        var attackRefusals: [Decision] = []
        var normalAllowed = 0
        var normalRefused: [Decision] = []
        var normalVerified = 0
        /// Allowed sends whose decision reports the guard in observe mode.
        var attackObserved = 0
        var normalObserved = 0
    }

    /// Runs the attack with `attackSends` requests, interleaved with `normalSends` per
    /// normal prefix; a trusted user verified before it started.
    static func run(on gate: Gate, attackSends: Int = 60, normalSends: Int = 30) async throws -> Outcome {
        #expect(try await gate.reserve(phone: trustedNumber).allowed)
        _ = try await gate.verify(phone: trustedNumber, outcome: .verified)
        var outcome = Outcome()
        for index in 0..<max(attackSends, normalSends) {
            if index < attackSends {
                let decision = try await gate.reserve(phone: attacked(index))
                if decision.allowed { outcome.attackAllowed += 1 } else { outcome.attackRefusals.append(decision) }
                if decision.observed.contains(.suspectedPumping) { outcome.attackObserved += 1 }
            }
            guard index < normalSends else { continue }
            for prefix in normalPrefixes {
                let phone = normal(prefix, index)
                let decision = try await gate.reserve(phone: phone)
                if !decision.observed.isEmpty { outcome.normalObserved += 1 }
                guard decision.allowed else {
                    outcome.normalRefused.append(decision)
                    continue
                }
                outcome.normalAllowed += 1
                if index % 5 != 4 {
                    _ = try await gate.verify(phone: phone, outcome: .verified)
                    outcome.normalVerified += 1
                }
            }
        }
        return outcome
    }

    /// The guard in observe mode (`--observe suspected_pumping`).
    static var observingPolicy: Policy {
        var policy = policy
        policy.observe = [.suspectedPumping]
        return policy
    }

    /// What a run in observe mode must show: every send allowed, those past the volume
    /// reported, the normal prefixes untouched, and the prefix listed as blocked with every
    /// send counted (the attack's and the trusted user's).
    static func expectObserved(_ outcome: Outcome, listed: [PrefixFigures], attackSends: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.attackAllowed == attackSends && outcome.attackRefusals.isEmpty, sourceLocation: sourceLocation)
        #expect(outcome.attackObserved == attackSends - (guardFigures.minSends! - 1), sourceLocation: sourceLocation)
        #expect(outcome.normalRefused.isEmpty && outcome.normalObserved == 0, sourceLocation: sourceLocation)
        #expect(listed.map(\.prefix.text) == [attackedPrefix], sourceLocation: sourceLocation)
        #expect(listed.first?.sends == attackSends + 1, sourceLocation: sourceLocation)
    }

    /// What every run must show: the attacked prefix blocked within its min volume (the
    /// trusted user's send counts toward it), every refusal `suspected_pumping` with a
    /// real wait within the window, the normal prefixes untouched.
    static func expectBlockedWithinMinVolume(_ outcome: Outcome, attackSends: Int = 60, sourceLocation: SourceLocation = #_sourceLocation) {
        let minSends = guardFigures.minSends!
        #expect(outcome.attackAllowed == minSends - 1, sourceLocation: sourceLocation)
        #expect(outcome.attackRefusals.count == attackSends - (minSends - 1), sourceLocation: sourceLocation)
        for refusal in outcome.attackRefusals {
            #expect(refusal.reason == .suspectedPumping && refusal.countdownToken == nil, sourceLocation: sourceLocation)
            #expect(refusal.retryAfterMilliseconds > 0 && refusal.retryAfterMilliseconds <= 3_600_000, sourceLocation: sourceLocation)
        }
        #expect(outcome.normalRefused.isEmpty, "\(outcome.normalRefused.map { ($0.phone.e164, $0.reason as Any) })", sourceLocation: sourceLocation)
    }
}
