/// A rule decided in the number's own script, `reserve.lua` (one Redis: with every rule of a
/// send; a Cluster: with those keyed in the number's slot, `Placement`), one type each: the
/// reasons it refuses with, its Lua part in each of the script's slots (`-- rules: check`),
/// and the constants those read, as its lines of the policy block (`ReserveScripts`).
protocol NumberRule {
    static var answers: [Decision.Reason] { get }
    static var parts: [RuleSlot: String] { get }
    static func block(_ script: ReserveVariant) -> String
}

/// reserve.lua's slots, in the order a send meets them: `check` reads and may refuse (nothing is
/// written yet), `hold` sets an allowed send's cooldown (`hold`, `holdMs`), `answer` adds to its
/// answer (its wait, its code), `write` stores it.
enum RuleSlot: String, CaseIterable { case check, hold, answer, write }

enum NumberRules {
    /// In the order their parts run in each slot.
    static var all: [any NumberRule.Type] { [Cooldowns.self, MaxSends.self, IPCap.self, FraudGuard.self, IssuedCodeRule.self] }

    /// A script's rules: the budgets and pumping guard only where guarded (one Redis), codes only for a purpose that issues them.
    static func of(guarded: Bool, codes: Bool) -> [any NumberRule.Type] {
        all.filter { ($0 != FraudGuard.self || guarded) && ($0 != IssuedCodeRule.self || codes) }
    }
}

/// What a reserve script is made for: a policy and a variant (`ReserveScripts`).
struct ReserveVariant {
    let policy: CompiledPolicy
    /// Whether the call counts the client's IP here, and keeps the cooldown in the window key (`WindowCooldowns`).
    var countingIP: Bool, cooldownInWindow: Bool
    let idempotencyLifetimeMilliseconds: Int64
    /// The longest IP window of any purpose: the IP's set, shared by all, is kept that long.
    let longestIPWindowMilliseconds: Int64
}
