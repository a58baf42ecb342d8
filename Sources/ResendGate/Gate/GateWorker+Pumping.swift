import RedisClient

/// The SMS-pumping guard on a Redis Cluster's reserve path (`pumping.lua`; on one Redis it
/// is part of the number's script: `FraudGuard`). A prefix's counts live in a slot of their
/// own (`rg:pump:{purpose:+447911}`), so the guard takes steps around the number's own
/// decision:
///
/// 1. `take` on the prefix's slot: judge the prefix and, when it is not blocked, count
///    this send at once (so concurrent sends see each other);
/// 2. not blocked: the number's step decides (`reserveNumber`); when it refuses (or Redis
///    fails, or it is a replay), the counted send is given back (`give`, not awaited);
/// 3. blocked: a replay is answered from its record (`storedAnswer`); otherwise
///    `pumpingRefusal` (the one place that decides a refusal) reads the number's
///    `trusted` key (`EXISTS`, its slot), only then: a number that verified within
///    `trustedFor` goes on to its own step, and its allowed send is counted (`force`, not
///    awaited); any other is refused with `suspected_pumping`, or, with the guard in observe
///    mode (`--observe suspected_pumping`), goes on as a trusted one's with
///    `suspected_pumping` in its decision's `observed`.
///
/// A purpose whose guard is off takes none of these steps: not one command more.
extension GateWorker {
    func reserveGuarded(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let rules = policy.rules.pumping
        let prefix = PrefixKey(request.phone, digits: rules.prefixDigits)
        pumpingStep("take", purpose: request.purpose, prefix: prefix, rules: rules) { [unowned self] result in
            let step: PumpingStep
            switch result {
            case .success(let value): step = value
            case .failure(let error): return completion(.failure(error))
            }
            guard step.figures.blocked else {
                return self.reserveNumber(request, policy: policy, cipher: cipher) { outcome in
                    if case .success(let decision) = outcome, decision.allowed, !decision.replayed {} else {
                        self.pumpingStep("give", purpose: request.purpose, prefix: prefix, rules: rules, field: step.countedField) { _ in }
                    }
                    completion(outcome)
                }
            }
            // A replay of an answer given before the prefix was blocked is that answer.
            self.storedAnswer(request, policy: policy, cipher: cipher) { stored in
                if let stored { return completion(stored) }
                self.pumpingRefusal(step.figures, request: request, policy: policy) { verdict in
                    switch verdict {
                    case .failure(let error): completion(.failure(error))
                    case .success(let refusal?) where !policy.rules.observes(.suspectedPumping): completion(.success(refusal))
                    // Observe mode: the refusal is reported, and the send goes on as a trusted one's.
                    case .success(.some):
                        self.reserveThenCount(request, policy: policy, cipher: cipher, prefix: prefix) { outcome in
                            completion(outcome.map { decision in
                                var reported = decision
                                if !decision.replayed { reported.observed.append(.suspectedPumping) }
                                return reported
                            })
                        }
                    case .success(nil): self.reserveThenCount(request, policy: policy, cipher: cipher, prefix: prefix, completion: completion)
                    }
                }
            }
        }
    }

    /// The guard's verdict on a send to a blocked prefix, the one place that decides it:
    /// the refusal it gets (`suspected_pumping`, with the prefix's figures' wait until it
    /// is free again), or nil for a number trusted within `trustedFor` (its key is read
    /// only here, so it costs nothing while the prefix is not blocked). Observe mode reports
    /// the refusal and goes on as for a trusted number (`reserveThenCount`).
    func pumpingRefusal(
        _ figures: PrefixFigures, request: SendRequest, policy: CompiledPolicy,
        completion: @escaping (Result<Decision?, GateError>) -> Void
    ) {
        isTrusted(request) { trusted in
            completion(trusted.map { isTrusted in
                isTrusted ? nil : Decision.suspectedPumping(
                    request, policy: policy, wait: figures.retryAfterMilliseconds, now: figures.serverTimeMilliseconds)
            })
        }
    }

    /// The number's own step for a send the guard lets through although its prefix is
    /// blocked; an allowed send is counted in the prefix all the same.
    func reserveThenCount(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, prefix: PrefixKey,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        reserveNumber(request, policy: policy, cipher: cipher) { [unowned self] outcome in
            if case .success(let decision) = outcome, decision.allowed, !decision.replayed {
                self.pumpingStep("force", purpose: request.purpose, prefix: prefix, rules: policy.rules.pumping) { _ in }
            }
            completion(outcome)
        }
    }

    /// Whether the number verified within the guard's `trustedFor` (its `trusted` key).
    private func isTrusted(_ request: SendRequest, completion: @escaping (Result<Bool, GateError>) -> Void) {
        let number = numberHasher.keyText(for: request.phone.e164)
        let keys = self.keys
        store.send(slotKey: keys.slotKey(purpose: request.purpose, number: number), { args in
            args.append("EXISTS")
            keys.append(.trusted, purpose: request.purpose, number: number, to: &args)
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                guard let count = reply.integer else { throw Self.unexpected(reply) }
                return count > 0
            })
        })
    }

    /// One call of `pumping.lua` on the prefix's slot; a `take` or `force` that found the
    /// prefix blocked and asked for it puts it in the registry of blocked prefixes.
    func pumpingStep(
        _ mode: String, purpose: Purpose, prefix: PrefixKey, rules: PumpingGuard, field: String = "",
        completion: @escaping (Result<PumpingStep, GateError>) -> Void
    ) {
        let keys = self.keys
        store.evaluate(GateScripts.pumping, slotKey: keys.prefixSlotKey(purpose: purpose, prefix: prefix), { args in
            args.append(1)
            keys.appendPumping(purpose: purpose, prefix: prefix, to: &args)
            args.append(mode)
            args.append(Int(rules.window.wholeMilliseconds))
            args.append(Int(rules.bucketMilliseconds))
            args.append(rules.minSends ?? 1)
            args.append(rules.minConversionPartsPerMillion)
            args.append(field)
            args.appendRedisNow()
        }, completion: { [unowned self] result in
            let step = Self.decode(result) { reply throws(GateError) in try Self.pumpingStep(reply, purpose: purpose, prefix: prefix) }
            if case .success(let value) = step, value.register {
                self.registerBlocked(purpose: purpose, prefix: prefix, now: value.figures.serverTimeMilliseconds)
            }
            completion(step)
        })
    }

    /// `pumping.lua`'s reply.
    static func pumpingStep(_ reply: RedisReply, purpose: Purpose, prefix: PrefixKey) throws(GateError) -> PumpingStep {
        guard case .array(let items) = reply, items.count == 8, let blocked = items[0].integer, let sends = items[1].integer,
              let verified = items[2].integer, let wait = items[3].integer, let since = items[4].integer,
              let now = items[5].integer, let register = items[6].integer
        else { throw Self.unexpected(reply) }
        let figures = PrefixFigures(
            purpose: purpose, prefix: prefix, blocked: blocked == 1, sends: sends, verifications: verified,
            retryAfterMilliseconds: Int64(wait), blockedSinceMilliseconds: since > 0 ? Int64(since) : nil,
            serverTimeMilliseconds: Int64(now))
        return PumpingStep(figures: figures, register: register == 1, countedField: items[7].string ?? "")
    }
}

/// What one call of `pumping.lua` found and did.
struct PumpingStep {
    let figures: PrefixFigures
    /// True when the prefix should be (re)written into the registry of blocked prefixes.
    let register: Bool
    /// The field the send was counted in ("" when it was not), for a `give`.
    let countedField: String
}
