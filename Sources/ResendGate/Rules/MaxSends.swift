/// `max_sends`: at most so many sends in the policy's window, counted in the number's window
/// key (the sends the ladder reads anyway). A full window refuses until its oldest counted
/// send leaves (`max-sends-check.lua`); the send that fills it holds its cooldown until then
/// (`max-sends-hold.lua`), so peek and tokens show the real wait.
enum MaxSends: NumberRule {
    static let parts: [RuleSlot: String] = [.check: "max-sends-check", .hold: "max-sends-hold"]

    static func block(_ script: ReserveVariant) -> String {
        "local maxSends, watchMax = \(script.policy.rules.maxSends ?? 0), \(script.policy.rules.observes(.maxSends))\n"
    }
}
