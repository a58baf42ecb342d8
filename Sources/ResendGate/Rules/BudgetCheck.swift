import RedisClient

/// One counted limit a send must fit in (`country_max_sends`, `max_sends_total`, a
/// `SendLimit`): the budget, the reason a full one gives, whether it only observes, its keys.
struct BudgetCheck {
    let reason: Decision.Reason
    let budget: SendBudget
    /// What is counted, in the budget's keys: the region (`CN`), the calling code (`+86`),
    /// `total`, or a limit's name, a dot and its value (`login-day.login`).
    let kind: String
    let observed: Bool

    /// Every counted limit of `policy`, in the order they are checked: the region and
    /// calling-code budgets, the total, then the limits written as data. The reserve script
    /// tells them apart by kind (`CN`, `total`), or by its start (`login-day.`: `matchesPrefix`)
    /// for a limit per value.
    static func rows(of policy: Policy) -> [(check: BudgetCheck, matchesPrefix: Bool)] {
        policy.countryMaxSends.sorted { $0.key < $1.key }.map {
            (BudgetCheck(reason: .countryLimit, budget: $0.value, kind: $0.key, observed: policy.observes(.countryLimit)), false)
        } + (policy.maxSendsTotal.map {
            [(BudgetCheck(reason: .globalLimit, budget: $0, kind: "total", observed: policy.observes(.globalLimit)), false)]
        } ?? []) + policy.limits.map {
            (BudgetCheck(reason: $0.reason, budget: $0.budget, kind: $0.name + ".", observed: policy.observes($0)), true)
        }
    }

    /// The limits that count a send of `request`, in the order of `rows(of:)` (a limit per IP
    /// counts no request without a client address).
    static func checks(for request: SendRequest, policy: Policy, context: GateContext) -> [BudgetCheck] {
        var checks: [BudgetCheck] = []
        let phone = request.phone
        if !policy.countryMaxSends.isEmpty {
            for destination in [phone.region, "+" + String(phone.countryCode)] {
                guard let budget = policy.countryMaxSends[destination] else { continue }
                checks.append(BudgetCheck(reason: .countryLimit, budget: budget, kind: destination, observed: policy.observes(.countryLimit)))
            }
        }
        if let budget = policy.maxSendsTotal {
            checks.append(BudgetCheck(reason: .globalLimit, budget: budget, kind: "total", observed: policy.observes(.globalLimit)))
        }
        guard !policy.limits.isEmpty else { return checks }
        let number = context.number(request.phone), address = context.addressKeyText(request)
        for limit in policy.limits {
            let value: String
            switch limit.per {
            case .number: value = number
            case .ip, .ipNumber:
                guard let address else { continue }
                value = limit.per == .ip ? address : String(SHA1.hexDigest(Array((address + " " + number).utf8)).prefix(20))
            case .region: value = phone.region
            case .callingCode: value = "+" + String(phone.countryCode)
            case .purpose: value = request.purpose.name
            case .all: value = ""
            }
            checks.append(BudgetCheck(reason: limit.reason, budget: limit.budget, kind: limit.name + "." + value, observed: policy.observes(limit)))
        }
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
