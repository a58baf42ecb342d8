import Foundation
@testable import ResendGate
import Testing

/// The reserve script answers in the text an idempotency record holds; the gate reads it,
/// and decides itself whether a stored record is this request's (a replay) or another's.
@Suite("Reserve answers and idempotency records")
struct ReserveAnswerTests {
    @Test func readsAFreshAnswerWithOrWithoutAFingerprint() throws {
        let allowed = try #require(ReserveAnswer(answer: "1  60000 1 120000 1796172917403 AAAAAAAAAAAAAAA1 "))
        #expect(allowed.allowed && allowed.reason == nil)
        #expect(allowed.waitMilliseconds == 60_000 && allowed.sends == 1 && allowed.nextMilliseconds == 120_000)
        #expect(allowed.nowMilliseconds == 1_796_172_917_403 && allowed.nonce == "AAAAAAAAAAAAAAA1" && allowed.observed.isEmpty)
        let refused = try #require(ReserveAnswer(answer: "0 max_sends 3600000 5 300000 17 BBBBBBBBBBBBBBBB cooldown,ip_limit +86|default|1.2.3.4 x"))
        #expect(!refused.allowed && refused.reason == .maxSends && refused.nonce == "BBBBBBBBBBBBBBBB")
        #expect(refused.observed == [.cooldown, .ipLimit])
        let noNonce = try #require(ReserveAnswer(answer: "0 ip_limit 500 2 120000 17  "))
        #expect(noNonce.nonce.isEmpty && noNonce.reason == .ipLimit)
    }

    @Test(arguments: [
        "", "1", "1  60000 1 120000 17 AAAAAAAAAAAAAAA1", "2  60000 1 120000 17 A ", "1  6O000 1 120000 17 A ",
        "1  60000 x 120000 17 A ", "1  60000 1 120000 seventeen A ", "{-1}",
    ])
    func refusesTextThatIsNotAnAnswer(text: String) {
        #expect(ReserveAnswer(answer: text) == nil)
    }

    @Test func aRecordIsReplayedOnlyForItsOwnFingerprint() {
        let record = "1  60000 1 120000 17 AAAAAAAAAAAAAAA1  +8613800138000|default|10.0.0.1|caller with spaces"
        guard case .answer(let answer) = ReserveAnswer.record(record, fingerprint: "+8613800138000|default|10.0.0.1|caller with spaces")
        else { Issue.record("its own request's record is replayed"); return }
        #expect(answer.allowed && answer.nonce == "AAAAAAAAAAAAAAA1")
        for other in ["+8613800138001|default|10.0.0.1|caller with spaces", "+8613800138000|default|10.0.0.1", "", " "] {
            guard case .otherRequest = ReserveAnswer.record(record, fingerprint: other) else {
                Issue.record("a record is never another request's answer: \(other)")
                continue
            }
        }
    }

    @Test func readsAnOlderVersionsRecordWithoutObservedRules() {
        let record = "0 cooldown 42000 1 120000 17 AAAAAAAAAAAAAAA1 +8613800138000|default|"
        guard case .answer(let answer) = ReserveAnswer.record(record, fingerprint: "+8613800138000|default|") else {
            Issue.record("an older record is replayed")
            return
        }
        #expect(!answer.allowed && answer.reason == .cooldown && answer.waitMilliseconds == 42_000 && answer.observed.isEmpty)
    }

    /// A refusal is never read as allowed (`Decision.allowed` is `reason == nil`): one with no
    /// reason, or a reason a newer gate wrote that this one does not know (a record replayed
    /// during a rolling upgrade), is a refusal by the number's cooldown.
    @Test(arguments: ["0  5000 1 60000 17 AAAAAAAAAAAAAAA1 ", "0 purpose_limit 5000 1 60000 17 AAAAAAAAAAAAAAA1 ip_limit"])
    func aRefusalIsNeverAllowedWhateverItsReason(text: String) throws {
        let answer = try #require(ReserveAnswer(answer: text))
        let request = SendRequest(phone: try PhoneNumber(parsing: "+8613800138000"), purpose: .default)
        let send = StepSend(
            request, policy: CompiledPolicy(Policy()), cipher: CountdownTokenCipher(secret: Array("secret of these tests".utf8)),
            number: "+8613800138000")
        let decision = try ReserveAnswer.decision(answer, replayed: true, send: send, sealer: nil, offeredCode: nil)
        #expect(!decision.allowed && decision.reason == .cooldown && decision.retryAfterMilliseconds == 5_000)
    }

    /// (The gate answers it as another request's key, 422, as the script did before.)
    @Test func anUnreadableRecordIsNeverReplayed() {
        guard case .unreadable = ReserveAnswer.record("garbage", fingerprint: "garbage") else {
            Issue.record("unreadable")
            return
        }
        guard case .unreadable = ReserveAnswer.record("1  x 1 120000 17 A  fp", fingerprint: "fp") else {
            Issue.record("a record with a bad number is unreadable")
            return
        }
    }
}

/// Each purpose's policy is written into its reserve script.
@Suite("Reserve scripts per policy")
struct ReserveScriptsTests {
    /// reserve.lua's own block is the every-rule policy deploy/dev/bench and deploy/dev/script-cost
    /// measure by loading the file as it is: it must be what a gate writes for that policy.
    @Test func theFilesBlockIsTheBenchesEveryRulePolicy() {
        let policy = CompiledPolicy(Policy(
            ladder: [.seconds(60), .seconds(120), .seconds(300)], window: .seconds(86_400), maxSends: 5,
            ipMaxSends: 100_000, ipWindow: .seconds(3600)))
        let scripts = ReserveScripts(policy: policy, idempotencyLifetimeMilliseconds: 86_400_000, longestIPWindowMilliseconds: 3_600_000)
        let everyRule = scripts.script(guarded: false, countingIP: true, cooldownInWindow: true).source
        // What `resendgate lua-script reserve` (deploy/dev's tools) makes of the files as they
        // are, byte for byte: the file's block and no part of the guard's.
        #expect(everyRule == GateScripts.text(of: "reserve"))
        #expect(Self.includeLines(everyRule).isEmpty)
        #expect(!everyRule.contains("guardObserved ~= ''"))
        #expect(scripts.script(guarded: false, countingIP: false, cooldownInWindow: true).source != everyRule)
        #expect(scripts.script(guarded: false, countingIP: true, cooldownInWindow: false).source != everyRule)
        #expect(scripts.all.count == 4)
    }

    /// The lines of `script` that still name a part instead of holding it.
    static func includeLines(_ script: String) -> [Substring] {
        script.split(separator: "\n").filter { $0.drop { $0 == " " }.hasPrefix("-- include: ") }
    }

    /// Likewise fraud-guard.lua's own block is the budgets and guard deploy/dev/bench's cost
    /// section adds to every rule, which `deploy/dev/script-cost --script reserve-guarded` loads.
    @Test func theGuardFilesBlockIsTheBenchesFraudPolicy() {
        var rules = Policy(
            ladder: [.seconds(60), .seconds(120), .seconds(300)], window: .seconds(86_400), maxSends: 5,
            ipMaxSends: 100_000, ipWindow: .seconds(3600))
        rules.countryMaxSends = ["CN": SendBudget(limit: 10_000_000, window: .seconds(86_400))]
        rules.maxSendsTotal = SendBudget(limit: 10_000_000, window: .seconds(86_400))
        rules.pumping.minSends = 10_000_000
        rules.pumping.window = .seconds(3600)
        let scripts = ReserveScripts(policy: CompiledPolicy(rules), idempotencyLifetimeMilliseconds: 86_400_000, longestIPWindowMilliseconds: 3_600_000)
        let guarded = scripts.script(guarded: true, countingIP: true, cooldownInWindow: true).source
        #expect(guarded.contains(String(decoding: EmbeddedFiles.fraudGuard, as: UTF8.self)))
        #expect(guarded.contains(String(decoding: EmbeddedFiles.budgetPolicy, as: UTF8.self)))
        // guard-check.lua and guard-count.lua are put in (their first lines of code), and not
        // in a policy's script without budgets or the guard.
        let checkStart = "for i = firstBudgetKey, #KEYS - codeKeys do\n", countStart = "do\n  local member = string.sub(ARGV[2], -16)\n"
        #expect(guarded.contains(checkStart) && guarded.contains(countStart))
        let unguarded = scripts.script(guarded: false, countingIP: true, cooldownInWindow: true).source
        #expect(!unguarded.contains(checkStart) && !unguarded.contains(countStart))
        #expect(guarded.components(separatedBy: ReserveScripts.guardBlockStart).count == 2)
        #expect(Self.includeLines(guarded).isEmpty)
        // `resendgate lua-script reserve-guarded` makes the same script of the files' blocks for
        // deploy/dev/script-cost: byte for byte what the gate loads.
        #expect(guarded == GateScripts.text(of: "reserve-guarded"))
        rules.pumping.minSends = 500
        rules.countryMaxSends["+44"] = SendBudget(limit: 7, window: .seconds(60))
        rules.observe = [.countryLimit]
        let other = ReserveScripts(policy: CompiledPolicy(rules), idempotencyLifetimeMilliseconds: 86_400_000, longestIPWindowMilliseconds: 3_600_000)
        let otherGuarded = other.script(guarded: true, countingIP: true, cooldownInWindow: true).source
        #expect(otherGuarded.contains("local pumpMinSends, pumpPPM = 500, 100000\n"))
        #expect(otherGuarded.contains("""
            if kind == '+44' then
              limit, shards, window, observed, reason = 7, 7, 60000, true, 'country_limit'
            elseif kind == 'CN' then
              limit, shards, window, observed, reason = 10000000, 8, 86400000, true, 'country_limit'
            elseif kind == 'total' then
              limit, shards, window, observed, reason = 10000000, 8, 86400000, false, 'global_limit'
            end

            """))
    }

    /// Without an IP cap, the scripts differ only by where they keep the cooldown.
    @Test func aPolicyWithoutAnIPCapHasOneScriptForEachCooldownHomeAndItsRulesAreWrittenIn() {
        var rules = Policy(ladder: [.seconds(30), .seconds(90)], window: .seconds(3600), maxSends: 7)
        rules.observe = [.maxSends]
        let scripts = ReserveScripts(
            policy: CompiledPolicy(rules), idempotencyLifetimeMilliseconds: 600_000, longestIPWindowMilliseconds: 7_200_000)
        #expect(scripts.all.count == 2)
        #expect(scripts.script(guarded: false, countingIP: true, cooldownInWindow: true) == scripts.script(guarded: false, countingIP: false, cooldownInWindow: true))
        #expect(scripts.script(guarded: false, countingIP: true, cooldownInWindow: false) == scripts.script(guarded: false, countingIP: false, cooldownInWindow: false))
        let block = ReserveScripts.block(ReserveVariant(
            policy: CompiledPolicy(rules), countingIP: false, cooldownInWindow: true, idempotencyLifetimeMilliseconds: 600_000,
            longestIPWindowMilliseconds: 7_200_000))
        // The idempotency record's lifetime, then each rule's lines (`NumberRule.block`).
        #expect(block.hasPrefix("""
            local lifetime, lifetimeText = 600000, '600000'
            local window, windowLifeText, keepSends = 3600000, '3600000', 16
            local cooldownInWindow, longest, steps = true, 3600000, 2
            local watchCooldown = false

            """))
        #expect(block.contains("local maxSends, watchMax = 7, true\n"))
        #expect(block.contains("local ipMax, ipWindow, ipKeep, ipKeepText, watchIP = 0, 3600000, 7200000, '8100000', false\n"))
        #expect(block.contains("return (select(i, '30000', '90000'))"))
        #expect(block.contains("local firstHold, firstHoldMs, secondHold = '30000', 30000, '90000'\n"))
    }
}

extension ReserveScriptsTests {
    /// A policy without a window has nowhere else to keep a cooldown: one script, and its
    /// twin for a cluster that names the cooldown key alone (it reads no window key).
    @Test func aPolicyWithoutAWindowKeepsItsCooldownInItsKey() throws {
        var rules = Policy(ladder: [.seconds(60)])
        rules.observe = [.cooldown]
        let scripts = ReserveScripts(
            policy: CompiledPolicy(rules), idempotencyLifetimeMilliseconds: 600_000, longestIPWindowMilliseconds: 0)
        let script = scripts.script(guarded: false, countingIP: false, cooldownInWindow: true)
        #expect(script.source.contains("local cooldownInWindow, longest, steps = false, 60000, 1\n"))
        let alone = try #require(scripts.cooldownKeyOnly)
        #expect(Set(scripts.all) == [script, alone])
        #expect(alone.source == script.source.replacing(ReserveScripts.numberRead, with: ReserveScripts.cooldownRead))
        #expect(!alone.source.contains("call('MGET'") && alone.source.contains(ReserveScripts.cooldownRead))
        // A policy with a window reads both keys: no such twin.
        let windowed = ReserveScripts(
            policy: CompiledPolicy(Policy(ladder: [.seconds(60), .seconds(120)])), idempotencyLifetimeMilliseconds: 600_000,
            longestIPWindowMilliseconds: 0)
        #expect(windowed.cooldownKeyOnly == nil)
    }

    /// Each rule's parts go in reserve.lua's slots, in `ReserveScripts.numberRules`'s order, indented as
    /// the slot; a script without the budgets' guard or codes has none of theirs.
    @Test func theRulesPartsGoInTheirSlotsInTheListsOrder() {
        let text = "a\n\n  -- rules: check\n-- rules: hold\n-- rules: write\n"
        #expect(ReserveScripts.withRules(text, ReserveScripts.numberRules) == """
            a

              -- include: cooldown-check
              -- include: max-sends-check
              -- include: ip-check
              -- include: guard-check
            -- include: ladder-hold
            -- include: max-sends-hold
            -- include: cooldown-write
            -- include: ip-count
            -- include: guard-count
            -- include: code-write

            """)
        #expect(ReserveScripts.withRules(text, ReserveScripts.rules(guarded: false, codes: false)) == """
            a

              -- include: cooldown-check
              -- include: max-sends-check
              -- include: ip-check
            -- include: ladder-hold
            -- include: max-sends-hold
            -- include: cooldown-write
            -- include: ip-count

            """)
    }

    /// With one step, a number's second send waits that step again.
    @Test func aOneStepLadderHoldsItsStepAfterTheFirstSendToo() {
        let block = ReserveScripts.block(ReserveVariant(
            policy: CompiledPolicy(Policy(ladder: [.seconds(60)], window: .seconds(3600), maxSends: 3)), countingIP: false,
            cooldownInWindow: true, idempotencyLifetimeMilliseconds: 600_000, longestIPWindowMilliseconds: 0))
        #expect(block.contains("local firstHold, firstHoldMs, secondHold = '60000', 60000, '60000'\n"))
    }
}
