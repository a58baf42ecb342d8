import RedisClient

/// The two reads that write nothing: a countdown token's cooldown, and a number's wait.
extension GateWorker {
    /// The remaining time of the cooldown that issued `token`, or nil when the token is
    /// not one of this deployment's (malformed, forged, altered, or sealed under a rotated
    /// secret: then Redis is not asked), or its cooldown ended, was released or replaced.
    /// One script call on the number's slot, which the token names.
    public func countdown(
        _ token: CountdownToken, completion: @escaping (Result<CountdownReading?, GateError>) -> Void
    ) {
        guard let cipher = tokenSecret.cipher else {
            return tokenSecret.withCipher { [unowned self] result in
                if case .failure(let error) = result { return completion(.failure(error)) }
                self.countdown(token, completion: completion)
            }
        }
        guard let contents = cipher.open(token) else { return completion(.success(nil)) }
        let keys = context.keys
        // An issued code's token follows the code's lifetime, in its code key.
        let script = contents.kind == .code ? GateScripts.countdownOfCode : GateScripts.countdownOfCooldown
        context.store.evaluate(script, slotKey: keys.slotKey(purpose: contents.purpose, number: contents.number), { args in
            if contents.kind == .code {
                args.append(1)
                keys.append(.code, purpose: contents.purpose, number: contents.number, to: &args)
            } else {
                args.append(2)
                keys.append(.cooldown, purpose: contents.purpose, number: contents.number, to: &args)
                keys.append(.window, purpose: contents.purpose, number: contents.number, to: &args)
            }
            args.append(contents.cooldownValue)
            args.appendRedisNow()
        }, completion: { result in
            completion(GateContext.decode(result, Self.reading))
        })
    }

    /// `{remaining ms, Redis time ms, the cooldown's value}` as a reading; nil for `{-2, ...}`.
    static func reading(_ reply: RedisReply) throws(GateError) -> CountdownReading? {
        guard case .array(let items) = reply, items.count >= 2,
              let pttl = items[0].integer, let now = items[1].integer else { throw GateContext.unexpected(reply) }
        guard pttl > 0 else { return nil }
        guard items.count == 3, let value = items[2].string else { throw GateContext.unexpected(reply) }
        return CountdownReading(
            retryAfterMilliseconds: Int64(pttl), serverTimeMilliseconds: Int64(now), cooldownIdentity: value)
    }

    /// Reads how long the number's own limits (its cooldown, `max sends`) refuse the next
    /// send, without consuming anything.
    public func peek(
        _ phone: PhoneNumber, purpose: Purpose, completion: @escaping (Result<CooldownStatus, GateError>) -> Void
    ) {
        let number = context.number(phone)
        let keys = context.keys
        let policy: CompiledPolicy
        do { policy = try context.policy(for: purpose) } catch { return completion(.failure(error)) }
        let firstStep = policy.ladderMilliseconds[0]
        context.store.evaluate(GateScripts.peek, slotKey: keys.slotKey(purpose: purpose, number: number), { args in
            args.append(2)
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            keys.append(.window, purpose: purpose, number: number, to: &args)
            args.append(Int(policy.windowMilliseconds), policy.rules.maxSends ?? 0)
            args.appendRedisNow()
        }, completion: { result in
            completion(GateContext.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 2,
                      let pttl = items[0].integer, let now = items[1].integer else { throw GateContext.unexpected(reply) }
                // -2: no cooldown. -1: a key without expiry (never written by us): the
                // next reserve gives it the first step, so report that much.
                let remaining = pttl == -1 ? firstStep : max(0, Int64(pttl))
                return CooldownStatus(
                    phone: phone, purpose: purpose, retryAfterMilliseconds: remaining, serverTimeMilliseconds: Int64(now))
            })
        })
    }
}
