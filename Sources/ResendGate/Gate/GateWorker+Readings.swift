import RedisClient

/// The two reads that write nothing: a countdown token's cooldown, and a number's wait.
extension GateWorker {
    /// The remaining time of the cooldown (or code) that issued `token`; nil when the token is
    /// not this deployment's (then Redis is not asked) or its cooldown ended, was released or replaced.
    public func countdown(
        _ token: CountdownToken, completion: @escaping (Result<CountdownReading?, GateError>) -> Void
    ) {
        guard let cipher = tokenSecret.cipher else {
            return tokenSecret.retry({ [unowned self] in self.countdown(token, completion: completion) }, failing: completion)
        }
        guard let contents = cipher.open(token) else { return completion(.success(nil)) }
        // An issued code's token follows the code's lifetime, in its code key.
        let isCode = contents.kind == .code
        let call = ScriptCall(
            isCode ? GateScripts.countdownOfCode : GateScripts.countdownOfCooldown, keys: context.keys,
            purpose: contents.purpose, number: contents.number, numberKeys: isCode ? [.code] : [.cooldown, .window],
            arguments: { args in
                args.append(contents.cooldownValue)
                args.appendRedisNow()
            },
            decode: { reply throws(GateError) -> CountdownReading? in
                // {remaining ms, Redis time ms}; {-2, ...}: the cooldown (or code) is gone.
                let (remaining, now) = try reply.integerPair()
                guard remaining > 0 else { return nil }
                return CountdownReading(
                    retryAfterMilliseconds: Int64(remaining), serverTimeMilliseconds: Int64(now),
                    cooldownIdentity: contents.cooldownValue)
            })
        context.store.run(call, completion: completion)
    }

    /// How long the number's own limits (its cooldown, `max sends`) refuse the next send; consumes nothing.
    public func peek(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<CooldownStatus, GateError>) -> Void
    ) {
        guard let policy = context.policy(for: purpose, else: completion) else { return }
        let firstStep = policy.ladderMilliseconds[0]
        let call = ScriptCall(
            GateScripts.peek, keys: context.keys, purpose: purpose, number: context.number(phone),
            numberKeys: [.cooldown, .window],
            arguments: { args in
                args.append(Int(policy.windowMilliseconds), policy.rules.maxSends ?? 0)
                args.appendRedisNow()
            },
            decode: { reply throws(GateError) in
                let (pttl, now) = try reply.integerPair()
                // -2: no cooldown. -1: a key without expiry (never written by us): the
                // next reserve gives it the first step, so report that much.
                let remaining = pttl == -1 ? firstStep : max(0, Int64(pttl))
                return CooldownStatus(
                    phone: phone, purpose: purpose, retryAfterMilliseconds: remaining, serverTimeMilliseconds: Int64(now))
            })
        context.store.run(call, completion: completion)
    }
}
