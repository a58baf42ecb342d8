import RedisClient

/// Codes the gate issues and checks (`Policy.codes`, `IssuedCodes`): a fresh code for each
/// send that may issue one, made before the call so the send's one script call stores it
/// (`issue.lua` for the default policy, `code-issue.lua` in `reserve.lua`), the code an
/// answer carries read back from its sealed record, and checks of typed codes
/// (`check.lua`): one atomic step, so of many concurrent checks of a code exactly one is
/// right and exactly the allowed wrong ones count. The lockout and the pumping guard's
/// conversion count each check themselves: no outcome report is taken for such a purpose.
struct IssuedCodeRule {
    let context: GateContext
    let prefixGuard: PrefixGuard

    /// A new code for a send of `purpose`, as the send's script takes it: its identity (a
    /// nonce of its own, never the send's, which seals the cooldown's token under the same
    /// key), digest and seal; nil when the purpose issues no codes.
    func argument(_ policy: CompiledPolicy, purpose: Purpose, number: String) -> String? {
        guard let codes = policy.rules.codes, let sealer = context.codeSealer else { return nil }
        let identity = context.tokens.next()
        return identity.text
            + sealer.sealedCode(CodeSealer.freshCode(length: codes.length), identity: identity, purpose: purpose, number: number)
    }

    /// A test number's fixed code (`GateConfiguration.testCode`), for a purpose that issues codes.
    func testCode(_ policy: CompiledPolicy, now: Int64) -> IssuedCode? {
        guard let codes = policy.rules.codes, let code = context.configuration.testCode else { return nil }
        return IssuedCode(
            code: code, expiresAtMilliseconds: now + codes.lifetime.wholeMilliseconds, resent: false, countdownToken: nil)
    }

    /// `Gate.check`: whether `code` is the number's live issued code, using it up if so.
    func check(
        _ phone: PhoneNumber, purpose: Purpose, code: String, completion: @escaping (Result<CodeCheck, GateError>) -> Void
    ) {
        let policy: CompiledPolicy
        do { policy = try context.policy(for: purpose) } catch { return completion(.failure(error)) }
        guard policy.rules.codes != nil, let sealer = context.codeSealer else { return completion(.failure(.codesNotIssued)) }
        let limit = policy.rules.maxFailedChecks
        guard IssuedCodes.isWellFormed(Substring(code)) else {
            return completion(.failure(.invalidField("code must be 4 to 10 digits")))
        }
        if context.configuration.testNumbers.contains(phone.e164) {
            guard let fixed = context.configuration.testCode else { return completion(.failure(.codeExpired)) }
            guard CodeSealer.constantTimeEqual(fixed, code) else { return completion(.failure(.wrongCode(attemptsLeft: limit))) }
            return completion(.success(CodeCheck(phone: phone, purpose: purpose, testNumber: true)))
        }
        let number = context.number(phone)
        let keys = context.keys
        let pumping = policy.rules.pumping
        let prefixGuard = self.prefixGuard
        context.store.evaluate(GateScripts.check, slotKey: keys.slotKey(purpose: purpose, number: number), { args in
            args.append(3)
            keys.append(.code, purpose: purpose, number: number, to: &args)
            keys.append(.cooldown, purpose: purpose, number: number, to: &args)
            keys.append(.trusted, purpose: purpose, number: number, to: &args)
            args.append(sealer.digest(code: code, purpose: purpose, number: number), limit, Int(policy.rules.lockout.wholeMilliseconds))
            args.append(pumping.isOn ? Int(pumping.trustedFor.wholeMilliseconds) : 0, Int(pumping.window.wholeMilliseconds))
            args.appendRedisNow()
            args.append(policy.rules.lockoutScope.rawValue)
        }, completion: { result in
            var counts = false
            let checked = GateContext.decode(result) { reply throws(GateError) -> CodeCheck in
                guard case .array(let items) = reply, items.count == 2, let code = items[0].integer, let value = items[1].integer
                else { throw GateContext.unexpected(reply) }
                switch code {
                case 1: counts = value == 1
                case 0: throw .wrongCode(attemptsLeft: value)
                case -1: throw .locked(retryAfterMilliseconds: Int64(max(1, value)))
                case -3: throw .codeLocked(retryAfterMilliseconds: Int64(max(0, value)), maxFailedChecks: limit)
                case -4: throw .codeExpired
                case -5: throw .codeUsed
                case -6: throw .codeVoided
                default: throw GateContext.unexpected(reply)
                }
                return CodeCheck(phone: phone, purpose: purpose, testNumber: false)
            }
            // A number's right code counts toward its prefix at most once per guard window.
            guard pumping.isOn, counts, case .success = checked else { return completion(checked) }
            prefixGuard.countVerified(phone, purpose: purpose, rules: pumping) { counted in
                completion(counted.flatMap { checked })
            }
        })
    }
}
