/// One send budget a send must fit in (`country_max_sends`, `max_sends_total`): the
/// budget, the reason a full one gives, and its keys.
struct BudgetCheck {
    let reason: Decision.Reason
    let budget: SendBudget
    /// The region (`CN`), the calling code (`+86`) or `total`: part of the budget's keys.
    let kind: String

    /// The budgets that count a send to `phone` under `policy`, in the order they are
    /// checked: its region's, its calling code's, then the total.
    static func checks(for phone: PhoneNumber, policy: Policy) -> [BudgetCheck] {
        var checks: [BudgetCheck] = []
        if !policy.countryMaxSends.isEmpty {
            if let budget = policy.countryMaxSends[phone.region] {
                checks.append(BudgetCheck(reason: .countryLimit, budget: budget, kind: phone.region))
            }
            let callingCode = "+" + String(phone.countryCode)
            if let budget = policy.countryMaxSends[callingCode] {
                checks.append(BudgetCheck(reason: .countryLimit, budget: budget, kind: callingCode))
            }
        }
        if let budget = policy.maxSendsTotal { checks.append(BudgetCheck(reason: .globalLimit, budget: budget, kind: "total")) }
        return checks
    }

    func key(_ keys: GateKeys, shard: Int) -> String {
        keys.budgetShard(scope: budget.scope, kind: kind, shard: shard)
    }

    /// The shard a send tries first: spread by its member's first byte.
    func firstShard(member: CooldownNonce) -> Int {
        Int(member.bytes[0]) % budget.shards
    }

    /// The refusal of a send this budget has no room for, for `wait` ms more.
    func refusal(_ request: SendRequest, wait: Int64, now: Int64, observed: [Decision.Reason]) -> Decision {
        Decision(request, refusedBy: reason, wait: wait, now: now, observed: observed, budgetLimit: budget.limit)
    }
}
