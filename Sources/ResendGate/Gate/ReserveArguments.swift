import RedisClient

/// The keys and arguments of one `reserve` script call (the policy is the script's own:
/// `ReserveScripts`), with the rules `placed` puts in it. On one Redis, keys the call does
/// not use (the IP's set, the idempotency record) name a never-written key in the number's
/// slot, so the budgets' keys keep their places. On a cluster the call names only the
/// number's keys it reads (why: `ReserveScripts.cooldownKeyOnly`).
struct ReserveArguments {
    let keys: GateKeys
    let send: StepSend
    let placed: Placement
    /// The value an allowed send's cooldown key takes.
    let nonce: CooldownNonce
    /// The member an allowed send adds to the IP's set, when the script counts the IP's cap:
    /// a nonce of its own, so the set cannot be joined to the number's keys.
    let ipMember: CooldownNonce?
    /// On a cluster: the call names the cooldown key alone (`ReserveScripts.cooldownKeyOnly`).
    var cooldownKeyOnly = false
    /// For a purpose that issues codes: the new code (`IssuedCodeRule.argument`); it is the
    /// last argument and the code key the last key (`code-issue.lua`).
    var code: String? = nil

    /// The hash tag of the number's keys: where the call runs on a cluster.
    var slotKey: String { keys.slotKey(purpose: send.request.purpose, number: send.number) }

    func write(_ args: inout RedisArguments) {
        let purpose = send.request.purpose, number = send.number, fraudGuard = placed.fraudGuard
        if placed.numberSlotOnly {
            args.append((cooldownKeyOnly ? 1 : 2) + (code == nil ? 0 : 1))
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            if !cooldownKeyOnly { keys.append(.window, purpose: purpose, number: number, to: &args) }
        } else {
            args.append(4 + (fraudGuard?.keyCount ?? 0) + (code == nil ? 0 : 1))
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            keys.append(.window, purpose: purpose, number: number, to: &args)
            // KEYS[3] and KEYS[4]: the IP's set and the idempotency record, or a key of the number's slot.
            if let address = placed.ipInScript {
                keys.appendIPSends(address: address, to: &args)
            } else {
                keys.append(.noIP, purpose: purpose, number: number, to: &args)
            }
            if let record = placed.recordInScript {
                args.append(record.key)
            } else {
                keys.append(.noIdempotency, purpose: purpose, number: number, to: &args)
            }
        }
        fraudGuard?.appendKeys(keys, purpose: purpose, number: number, to: &args)
        if code != nil { keys.append(.code, purpose: purpose, number: number, to: &args) }
        args.appendRedisNow()
        // The IP's and the budgets' members ride after the nonce in the same argument (one
        // argument each fewer).
        args.appendPart(nonce.text)
        if let ipMember { args.appendPart(ipMember.text) }
        if let fraudGuard, !fraudGuard.checks.isEmpty { args.appendPart(fraudGuard.member.text) }
        args.endArgument()
        args.append(placed.recordInScript?.fingerprint ?? "")
        if placed.numberSlotOnly {
            // What the steps in other slots hand the number: the IP cap's wait, decided outside
            // the slot, that refuses this send as `ip_limit` unless the number's own limits end
            // later (0: none), and the record an allowed send names in its cooldown's value so
            // a refund can void it.
            args.append(Int(send.outsideWaitMilliseconds))
            args.append(send.linkedRecord ?? "")
        } else if code != nil {
            // The cluster's two arguments, empty, so the code's stays last and ip-check.lua
            // and cooldown-write.lua read theirs where a cluster puts them.
            args.append(0, "")
        }
        if let code { args.append(code) }
    }
}
