/// A policy with its durations turned into the milliseconds the script takes.
struct CompiledPolicy {
    let rules: Policy
    let ladderMilliseconds: [Int64]
    /// 0 when sends need no counting (a flat cooldown without a cap). A policy with a window
    /// keeps a number's running cooldown in its window key (`reserve.lua`).
    let windowMilliseconds: Int64
    /// The longest a cooldown of the policy can run: its window or its longest ladder step.
    let longestHoldMilliseconds: Int64
    let ipWindowMilliseconds: Int64
    /// The policy's window, in which refunds and wrong codes count even when sends do not.
    let policyWindowMilliseconds: Int64
    /// The cooldown of a policy that is one unobserved cooldown counting nothing: requests
    /// with no IP to cap nor idempotency key take the plain `SET NX` (`Cooldowns`).
    let plainCooldownMilliseconds: Int64?
    /// The rules that are not counters, decided in memory before Redis is asked (`PolicyRule`).
    let rulesInMemory: [any PolicyRule]

    init(_ rules: Policy) {
        self.rules = rules
        ladderMilliseconds = rules.ladder.map(\.wholeMilliseconds)
        windowMilliseconds = rules.ladder.count > 1 || rules.maxSends != nil ? rules.window.wholeMilliseconds : 0
        ipWindowMilliseconds = rules.ipWindow.wholeMilliseconds
        policyWindowMilliseconds = rules.window.wholeMilliseconds
        longestHoldMilliseconds = max(windowMilliseconds, ladderMilliseconds.max() ?? 0)
        // A plain `SET NX` cannot let a send through a running cooldown: an observed one takes the script.
        plainCooldownMilliseconds = windowMilliseconds == 0 && ladderMilliseconds.count == 1 && !rules.observes(.cooldown)
            ? ladderMilliseconds[0] : nil
        do { rulesInMemory = try PolicyRules.rules(of: rules) } catch { preconditionFailure("a policy that was not linted: \(error)") }
    }

    /// The first refusal of the rules decided in memory; `clock` (the gate's wall clock) is
    /// read only when the policy has such a rule.
    func refusal(of request: SendRequest, clock: () -> Int64) -> Decision? {
        guard !rulesInMemory.isEmpty else { return nil }
        let now = clock()
        let input = RuleInput(number: request.phone, purpose: request.purpose.name, nowMilliseconds: now)
        for rule in rulesInMemory {
            guard let found = rule.refusal(of: input) else { continue }
            return refusal(request, by: found.reason, wait: found.waitMilliseconds, now: now)
        }
        return nil
    }

    /// A refusal decided outside the number's script (in memory, or a step of its own), for at
    /// least 1 ms: the next send's cooldown is the policy's first. `quota`: `budgetLimit`.
    func refusal(
        _ request: SendRequest, by reason: Decision.Reason, wait: Int64, now: Int64, observed: [Decision.Reason] = [], quota: Int? = nil
    ) -> Decision {
        Decision(
            request, refusedBy: reason, wait: max(1, wait), now: now, next: ladderMilliseconds[0], observed: observed, budgetLimit: quota)
    }
}
