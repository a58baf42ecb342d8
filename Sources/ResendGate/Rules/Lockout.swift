import RedisClient

/// Verification outcomes and the wrong-code lockout (`verify.lua`); a `verified` also
/// makes the number trusted by the pumping guard and counts in its prefix (`PrefixGuard`).
struct Lockout {
    let context: GateContext
    let prefixGuard: PrefixGuard

    /// `Gate.verify`: nothing changes while locked, so the back end knows to stop accepting
    /// the code. A test number, or a policy without lockout (nor, for a `verified`, pumping
    /// guard), asks nothing of Redis. With the guard on, a `verified` also trusts the number
    /// for `trustedFor` and counts in its prefix (a second step), once per guard window.
    func verify(
        _ phone: PhoneNumber, purpose: Purpose, outcome: VerificationOutcome,
        completion: @escaping (Result<VerificationResult, GateError>) -> Void
    ) {
        guard let policy = context.policy(for: purpose, else: completion) else { return }
        let limit = policy.rules.maxFailedChecks
        let pumping = policy.rules.pumping
        let trusts = outcome == .verified && pumping.isOn
        guard limit > 0 || trusts, !context.configuration.testNumbers.contains(phone.e164) else {
            return completion(.success(VerificationResult(outcome: outcome, phone: phone, purpose: purpose, attemptsLeft: nil)))
        }
        let call = ScriptCall(
            GateScripts.verify, keys: context.keys, purpose: purpose, number: context.number(phone),
            numberKeys: [.cooldown, .failedChecks, .trusted, .window],
            arguments: { args in
                args.append(outcome.rawValue, max(1, limit), Int(policy.policyWindowMilliseconds))
                args.append(Int(policy.rules.lockout.wholeMilliseconds), trusts ? Int(pumping.trustedFor.wholeMilliseconds) : 0)
                args.append(Int(pumping.window.wholeMilliseconds))
                args.appendRedisNow()
                args.append(policy.rules.lockoutScope.rawValue)
            },
            decode: { reply throws(GateError) in
                let (code, value) = try reply.integerPair()
                switch code {
                case -1: throw .locked(retryAfterMilliseconds: Int64(max(1, value)))
                case -2: throw .noCodeSent
                case -3: throw .codeLocked(retryAfterMilliseconds: Int64(max(0, value)), maxFailedChecks: limit)
                default: break
                }
                let result = VerificationResult(
                    outcome: outcome, phone: phone, purpose: purpose, attemptsLeft: outcome == .failed && limit > 0 ? value : nil)
                // {1, 1}: a `verified` that counts toward the prefix.
                return (result, counts: code == 1 && value == 1)
            })
        context.store.run(call) { answer in
            // A number's `verified` counts toward its prefix at most once per guard window.
            guard trusts, case .success((let verification, counts: true)) = answer else { return completion(answer.map(\.0)) }
            // Counted once Redis has it, so a send after this answer sees the conversion.
            prefixGuard.countVerified(phone, purpose: purpose, rules: pumping) { counted in
                completion(counted.map { verification })
            }
        }
    }
}
