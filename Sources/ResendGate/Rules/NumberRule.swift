/// A rule decided in the number's own script, `reserve.lua` (one Redis: with every rule of a
/// send; a Cluster: with those keyed in the number's slot, `Placement`), one type each: its
/// Lua part in each of the script's slots (`-- rules: check`), and the constants those read,
/// as its lines of the policy block (`ReserveScripts`, which lists them: `numberRules`).
protocol NumberRule {
    static var parts: [RuleSlot: String] { get }
    static func block(_ script: ReserveVariant) -> String
}

/// reserve.lua's slots, in the order a send meets them: `check` reads and may refuse (nothing is
/// written yet), `hold` sets an allowed send's cooldown (`hold`, `holdMs`), `answer` adds to its
/// answer (its wait, its code), `write` stores it.
enum RuleSlot: String { case check, hold, answer, write }

/// What a reserve script is made for: a policy and a variant (`ReserveScripts`).
struct ReserveVariant {
    let policy: CompiledPolicy
    /// Whether the call counts the client's IP here, and keeps the cooldown in the window key (`WindowCooldowns`).
    var countingIP: Bool, cooldownInWindow: Bool
    let idempotencyLifetimeMilliseconds: Int64
    /// The longest IP window of any purpose: the IP's set, shared by all, is kept that long.
    let longestIPWindowMilliseconds: Int64
}
