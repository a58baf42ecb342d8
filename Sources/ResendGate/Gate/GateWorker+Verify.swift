import RedisClient

/// Verification outcomes and the wrong-code lockout (`verify.lua`).
extension GateWorker {
    /// Records the outcome of a code the back end checked for `phone`: `verified` clears
    /// its wrong codes; `failed` counts one in the policy's window and, at
    /// `maxFailedChecks`, locks the number for `lockout` (sends and verifications are then
    /// refused with `locked`). Fails with `locked` while the number is locked: nothing
    /// changes then, so the back end knows to stop accepting codes. One script call on
    /// the number's slot; a test number or a policy without lockout asks nothing of Redis.
    public func verify(
        _ phone: PhoneNumber, purpose: Purpose, outcome: VerificationOutcome,
        completion: @escaping (Result<VerificationResult, GateError>) -> Void
    ) {
        let policy: CompiledPolicy
        do { policy = try self.policy(for: purpose) } catch { return completion(.failure(error)) }
        let limit = policy.rules.maxFailedChecks
        guard limit > 0, !configuration.testNumbers.contains(phone.e164) else {
            return completion(.success(VerificationResult(outcome: outcome, phone: phone, purpose: purpose, attemptsLeft: nil)))
        }
        let number = numberHasher.keyText(for: phone.e164)
        let keys = self.keys
        store.evaluate(GateScripts.verify, slotKey: keys.slotKey(purpose: purpose, number: number), { args in
            args.append(2)
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            keys.append(.failedChecks, purpose: purpose, number: number, to: &args)
            args.append(outcome.rawValue)
            args.append(limit)
            args.append(Int(policy.policyWindowMilliseconds))
            args.append(Int(policy.rules.lockout.wholeMilliseconds))
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) -> VerificationResult in
                guard case .array(let items) = reply, items.count == 2, let code = items[0].integer, let value = items[1].integer
                else { throw Self.unexpected(reply) }
                if code == -1 { throw .locked(retryAfterMilliseconds: Int64(max(1, value))) }
                return VerificationResult(
                    outcome: outcome, phone: phone, purpose: purpose, attemptsLeft: outcome == .failed ? value : nil)
            })
        })
    }
}
