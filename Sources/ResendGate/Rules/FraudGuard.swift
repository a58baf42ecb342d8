import RedisClient

/// Send budgets and the SMS-pumping guard in a send's one reserve script on one Redis
/// (`fraud-guard.lua`): atomic, so a send holds no share while another step decides and
/// nothing is given back. On a Cluster they are steps of their own (`SendBudgets`, `PrefixGuard`).
struct FraudGuard {
    let checks: [BudgetCheck]
    /// The destination prefix, when the purpose's guard is on.
    let prefix: PrefixKey?
    /// What the budgets count the send under: its own nonce, so they cannot be joined to the number's keys.
    let member: CooldownNonce

    init(_ request: SendRequest, policy: Policy, context: GateContext) {
        checks = BudgetCheck.checks(for: request, policy: policy, context: context)
        prefix = policy.pumping.isOn ? PrefixKey(request.phone, digits: policy.pumping.prefixDigits) : nil
        member = context.tokens.next()
    }

    /// The keys after the reserve script's four: the number's trust mark and the prefix's
    /// counts (with the guard on), then the shard each budget tries first.
    func appendKeys(_ keys: GateKeys, purpose: Purpose, number: String, to args: inout RedisArguments) {
        if let prefix {
            keys.append(.trusted, purpose: purpose, number: number, to: &args)
            keys.appendPumping(purpose: purpose, prefix: prefix, to: &args)
        }
        for check in checks {
            keys.appendBudgetShard(scope: check.budget.scope, kind: check.kind, shard: check.firstShard(member: member), to: &args)
        }
    }

    var keyCount: Int { (prefix == nil ? 0 : 2) + checks.count }

    /// The script's reply read for the guard's part: the guard's `refusal`, else the number's
    /// answer (`rest`, as the reserve script without the guard gives it); `register`: the
    /// prefix is due in the registry of blocked prefixes. `{which, wait, now, observed,
    /// register}` is the guard's refusal (which: a budget's place, 1-based, or 0 for the
    /// pumping guard); `{answer, 1}` an answer with the prefix due in the registry; any other
    /// reply is the number's answer as it is.
    func read(
        _ reply: RedisReply, request: SendRequest, policy: CompiledPolicy
    ) throws(GateError) -> (refusal: Decision?, rest: RedisReply, register: Bool) {
        guard case .array(let items) = reply, items.count == 2 || items.count == 5 else { return (nil, reply, false) }
        if items.count == 2 {
            guard items[1].integer == 1, prefix != nil else { throw GateContext.unexpected(reply) }
            return (nil, items[0], true)
        }
        guard let which = items[0].integer, let wait = items[1].integer, let now = items[2].integer,
              let observedText = items[3].string, let register = items[4].integer,
              which >= 0, which <= checks.count, which > 0 || prefix != nil, wait >= 1
        else { throw GateContext.unexpected(reply) }
        let observed = observedText.split(separator: ",").compactMap { Decision.Reason(rawValue: String($0)) }
        let refusal = which > 0
            ? checks[which - 1].refusal(request, wait: Int64(wait), now: Int64(now), observed: observed)
            : policy.refusal(request, by: .suspectedPumping, wait: Int64(wait), now: Int64(now), observed: observed)
        return (refusal, reply, register == 1)
    }
}

/// Its parts in the number's script; its constants go in fraud-guard.lua's own block, which
/// `ReserveScripts` puts right after the policy block with the file's declarations.
extension FraudGuard: NumberRule {
    static let answers: [Decision.Reason] = [.countryLimit, .globalLimit, .suspectedPumping] + SendLimit.reasons
    static let parts: [RuleSlot: String] = [.check: "guard-check", .write: "guard-count"]

    /// Where KEYS' budgets begin and end (a purpose that issues codes passes its code key
    /// after them), and the pumping guard's figures (each budget's: `ReserveScripts.budgetPolicy`).
    static func block(_ script: ReserveVariant) -> String {
        let rules = script.policy.rules, pumping = rules.pumping
        return """
            local firstBudgetKey, codeKeys = \(pumping.isOn ? 7 : 5), \(rules.codes == nil ? 0 : 1)
            local pumpOn, pumpObserved = \(pumping.isOn), \(rules.observes(.suspectedPumping))
            local pumpWindow, pumpBucket = \(pumping.window.wholeMilliseconds), \(pumping.bucketMilliseconds)
            local pumpMinSends, pumpPPM = \(pumping.minSends ?? 1), \(pumping.minConversionPartsPerMillion)

            """
    }
}
