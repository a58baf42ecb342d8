import RedisClient

/// The per-IP cap (`--ip-max-sends`, `--ip-window`): one sorted set of an IP's allowed sends
/// for every purpose, kept for the longest IP window. On one Redis the reserve script counts
/// it; on a Cluster, `take` is a step before the number's, and `giveBack` undoes it.
struct IPCap {
    let context: GateContext
    /// The longest IP window of the purposes that cap IPs: how long an IP's set is kept.
    let longestWindowMilliseconds: Int64

    init(context: GateContext) {
        self.context = context
        longestWindowMilliseconds = Self.longestWindow(of: context.compiled)
    }

    /// The longest IP window of `policies` that cap IPs (0: none does).
    static func longestWindow(of policies: [String: CompiledPolicy]) -> Int64 {
        policies.values.filter { $0.rules.ipMaxSends != nil }.map(\.ipWindowMilliseconds).max() ?? 0
    }

    /// What the IP's cap said before the number is decided.
    enum Step {
        /// No cap applies.
        case none
        /// A share was taken under `member`; `waitAfter` is the IP's wait once it counts.
        case taken(key: String, member: CooldownNonce, waitAfter: Int64)
        /// The cap refuses for `wait` ms.
        case refused(wait: Int64)
    }

    /// Takes a share of the IP's cap on its slot (`ip-take.lua`) under a member of its own,
    /// not the send's nonce, so the IP's set cannot be joined to the number's keys.
    func take(_ request: SendRequest, policy: CompiledPolicy, completion: @escaping (Result<Step, GateError>) -> Void) {
        guard let cap = policy.rules.ipMaxSends, let address = context.addressKeyText(request) else { return completion(.success(.none)) }
        let key = context.keys.ipSends(address: address)
        let member = context.tokens.next()
        let keep = longestWindowMilliseconds
        let call = ScriptCall(script: GateScripts.ipTake, slotKey: key, arguments: { args in
            args.append(1, key, cap, Int(policy.ipWindowMilliseconds), member.text, Int(keep))
            args.appendRedisNow()
        }, decode: { reply throws(GateError) -> Step in
            let (taken, wait) = try reply.integerPair()
            return taken == 1 ? .taken(key: key, member: member, waitAfter: Int64(wait)) : .refused(wait: Int64(wait))
        })
        context.store.run(call, completion: completion)
    }

    /// Gives a taken share back (the number refused, or Redis failed); not awaited.
    func giveBack(_ step: Step) {
        guard case .taken(let key, let member, _) = step else { return }
        context.giveBack(member: member, of: key)
    }
}
