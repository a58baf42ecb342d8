import RedisClient

/// The per-IP cap (`--ip-max-sends`, `--ip-window`): one sorted set of an IP's allowed sends
/// for every purpose, kept for the longest IP window. On one Redis the reserve script counts
/// it; on a Cluster it is a step of its own (`SlotStep`).
struct IPCap: SlotStep {
    let context: GateContext
    /// How long an IP's set is kept: the longest IP window of the policies that cap IPs (0: none does).
    let longestWindowMilliseconds: Int64

    /// Takes a share of the IP's cap on its slot (`ip-take.lua`) under a member of its own,
    /// not the send's nonce, so the IP's set cannot be joined to the number's keys. A full
    /// enforced cap still asks the number, without reserving, so the answer gives the longer
    /// wait of both; a full observed one takes nothing and reports `ip_limit` observed.
    func take(_ send: StepSend, completion: @escaping (Result<SlotShare, GateError>) -> Void) {
        guard let cap = send.policy.rules.ipMaxSends, let address = context.addressKeyText(send.request) else {
            return completion(.success(SlotShare()))
        }
        let key = context.keys.ipSends(address: address), member = context.tokens.next(), context = context
        let keep = longestWindowMilliseconds, window = send.policy.ipWindowMilliseconds
        let watched = send.policy.rules.observes(.ipLimit)
        let call = ScriptCall(script: GateScripts.ipTake, slotKey: key, arguments: { args in
            args.append(1, key, cap, Int(window), member.text, Int(keep))
            args.appendRedisNow()
        }, decode: { reply throws(GateError) -> SlotShare in
            let (taken, wait) = try reply.integerPair()
            // Taken: the send that fills an enforced cap waits for the IP too.
            let giveBack = { context.giveBack(member: member, of: key) }
            if taken == 1 { return SlotShare(giveBack: giveBack, waitAfter: watched ? 0 : Int64(wait)) }
            if watched { return SlotShare(observed: [.ipLimit]) }
            send.outsideWaitMilliseconds = max(1, Int64(wait))
            return SlotShare()
        })
        context.store.run(call, completion: completion)
    }
}

/// On one Redis the cap is decided in the number's script: a full cap refuses with the
/// longest wait (`ip-check.lua`), the send that fills it waits for it too (`ip-hold.lua`),
/// an allowed send joins the IP's set (`ip-count.lua`).
extension IPCap: NumberRule {
    static let parts: [RuleSlot: String] = [.check: "ip-check", .answer: "ip-hold", .write: "ip-count"]

    static func block(_ script: ReserveVariant) -> String {
        let policy = script.policy, window = policy.ipWindowMilliseconds
        let keep = max(window, script.longestIPWindowMilliseconds)
        let cap = script.countingIP ? policy.rules.ipMaxSends ?? 0 : 0, watched = policy.rules.observes(.ipLimit)
        return "local ipMax, ipWindow, ipKeep, ipKeepText, watchIP = \(cap), \(window), \(keep), '\(keep + keep / 8)', \(watched)\n"
    }
}
