import RedisClient

/// The keys and arguments of one `reserve` script call (the policy is the script's own:
/// `ReserveScripts`). On one Redis, keys the call does not use (the IP's set, the
/// idempotency record) name a never-written key in the number's slot, so the budgets' keys
/// keep their places. On a cluster the call names only the number's keys it reads: a
/// never-written one would draw `TRYAGAIN` all through a migration (`ReserveScripts.cooldownKeyOnly`).
struct ReserveArguments {
    let keys: GateKeys
    let purpose: Purpose
    let number: String
    /// The value an allowed send's cooldown key takes.
    let nonce: CooldownNonce
    /// The member an allowed send adds to the IP's set: a nonce of its own, so the set cannot
    /// be joined to the number's keys.
    var ipMember: CooldownNonce? = nil
    /// The client's address as its key names it, when this call checks the per-IP cap.
    let ipAddress: String?
    /// The idempotency record's key when it is written in this call (one Redis).
    let idempotencyKey: String?
    let fingerprint: String?
    /// On a cluster: the idempotency record (written apart) an allowed send names in its
    /// cooldown's value so a refund can void it, and the IP cap's wait, decided outside the
    /// slot, that refuses this send as `ip_limit` unless the number's own limits end later (0: none).
    var cluster: (linkedRecord: String?, outsideWaitMilliseconds: Int64)? = nil
    /// On a cluster: the call names the cooldown key alone (`ReserveScripts.cooldownKeyOnly`).
    var cooldownKeyOnly = false
    /// Budgets and the pumping guard in the same call (one Redis: `FraudGuard`).
    var fraudGuard: FraudGuard? = nil
    /// For a purpose that issues codes: the new code (`IssuedCodeRule.argument`); it is the
    /// last argument and the code key the last key (`code-issue.lua`).
    var code: String? = nil

    /// The hash tag of the number's keys: where the call runs on a cluster.
    var slotKey: String { keys.slotKey(purpose: purpose, number: number) }

    func write(_ args: inout RedisArguments) {
        if cluster != nil {
            // The IP's cap, the idempotency record and the budgets are steps of their own.
            precondition(ipAddress == nil && idempotencyKey == nil && fraudGuard == nil, "a cluster's call names the number's keys only")
            args.append((cooldownKeyOnly ? 1 : 2) + (code == nil ? 0 : 1))
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            if !cooldownKeyOnly { keys.append(.window, purpose: purpose, number: number, to: &args) }
        } else {
            args.append(4 + (fraudGuard?.keyCount ?? 0) + (code == nil ? 0 : 1))
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            keys.append(.window, purpose: purpose, number: number, to: &args)
            appendUnusedKeys(&args)
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
        args.append(fingerprint ?? "")
        if let cluster {
            args.append(Int(cluster.outsideWaitMilliseconds))
            args.append(cluster.linkedRecord ?? "")
        } else if code != nil {
            // The cluster's two arguments, empty, so the code's stays last and ip-check.lua
            // and cooldown-write.lua read theirs where a cluster puts them.
            args.append(0, "")
        }
        if let code { args.append(code) }
    }

    /// KEYS[3] and KEYS[4] on one Redis: the IP's set and the idempotency record, or, for
    /// either the call does not use, a key of the number's slot.
    private func appendUnusedKeys(_ args: inout RedisArguments) {
        if let ipAddress {
            keys.appendIPSends(address: ipAddress, to: &args)
        } else {
            keys.append(.noIP, purpose: purpose, number: number, to: &args)
        }
        if let idempotencyKey {
            args.append(idempotencyKey)
        } else {
            keys.append(.noIdempotency, purpose: purpose, number: number, to: &args)
        }
    }
}
