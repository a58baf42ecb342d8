import RedisClient

/// The keys and arguments of one `reserve` script call (see `GateScripts.reserve`).
/// Keys the call does not use still name a key in the number's slot, so the script's
/// arity never changes and a cluster never sees keys of two slots in one call.
struct ReserveArguments {
    let keys: GateKeys
    let purpose: Purpose
    let number: String
    let policy: CompiledPolicy
    /// The value an allowed send's cooldown key takes.
    let nonce: CooldownNonce
    /// The client's address when the per-IP cap is checked in this call.
    let ipAddress: String?
    let ipCap: Int
    let idempotencyKey: String?
    let fingerprint: String?
    let idempotencyLifetime: Int64
    /// The idempotency record an allowed send names in its cooldown's value, so that a
    /// refund can void it (on a cluster the record is written apart, in its own slot).
    var linkedRecord: String? = nil
    /// A wait decided outside the number's slot (a cluster's per-IP cap) that refuses
    /// this send as `ip_limit` unless the number's own limits end later; 0: none.
    var outsideWaitMilliseconds: Int64 = 0
    /// The longest IP window of any purpose: the IP's set, shared by every purpose that
    /// caps IPs, is trimmed and kept by it, so a purpose with a short window cannot erase
    /// sends that another one still counts.
    var longestIPWindowMilliseconds: Int64 = 0

    /// The hash tag of the number's keys: where the call runs on a cluster.
    var slotKey: String { keys.slotKey(purpose: purpose, number: number) }

    func write(_ args: inout RedisArguments) {
        args.append(4)
        keys.append(.cooldown, purpose: purpose, number: number, to: &args)
        keys.append(.window, purpose: purpose, number: number, to: &args)
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
        args.append(Int(policy.windowMilliseconds))
        args.append(policy.rules.maxSends ?? 0)
        args.append(ipCap)
        args.append(Int(policy.ipWindowMilliseconds))
        args.append(fingerprint ?? "")
        args.append(Int(idempotencyLifetime))
        args.append(nonce.text)
        args.append(linkedRecord ?? "")
        args.append(Int(longestIPWindowMilliseconds))
        args.append(Int(outsideWaitMilliseconds))
        args.append(policy.observedRules)
        for step in policy.ladderMilliseconds { args.append(Int(step)) }
    }
}
