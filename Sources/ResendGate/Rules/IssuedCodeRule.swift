import GateRuntime
import RedisClient

/// Codes the gate issues (`Policy.codes`: made before the send's call, stored by its script
/// or `store`) and checks (`check.lua`, one atomic step: of concurrent checks exactly one is
/// right and exactly the allowed wrong ones count). Checks count toward the lockout and the
/// pumping guard's conversion themselves: such a purpose takes no outcome reports.
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

    /// After the plain `SET NX` allowed a send (`Cooldowns.reservePlainly`), stores its code by
    /// a command of its own, `SET … NX PX … GET` (`same`: a live code is sent again) or `SET …
    /// PX …`: a script doing both costs Redis more (8.6 µs against 4.8 µs for the SET,
    /// `deploy/dev/bench --only cost`). A code not stored is a 503 (no SMS; the cooldown runs).
    /// Other decisions, and purposes without codes, pass through.
    func store(
        _ outcome: Result<Decision, GateError>, policy: CompiledPolicy, number: String, now: Int64, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        guard case .success(var decision) = outcome, decision.allowed, let codes = policy.rules.codes, let sealer = context.codeSealer,
              let argument = argument(policy, purpose: decision.purpose, number: number)
        else { return completion(outcome) }
        let life = codes.lifetime.wholeMilliseconds
        let record = CodeRecord.text(argument: argument, expiresAtMilliseconds: now + life)
        let purpose = decision.purpose, keys = context.keys, store = context.store
        let slotKey = keys.slotKey(purpose: purpose, number: number)
        let finish = { (text: String) in
            guard let issued = sealer.issued(Substring(text), purpose: purpose, number: number, offered: argument, cipher: cipher)
            else { return completion(.failure(.unreadableCode)) }
            decision.issuedCode = issued
            completion(.success(decision))
        }
        let set = { (onlyNew: Bool, then: @escaping (RedisReply) -> Void) in
            store.send(slotKey: slotKey, { args in
                args.append("SET")
                keys.append(.code, purpose: purpose, number: number, to: &args)
                args.append(record, "PX", Int(life))
                if onlyNew { args.append("NX", "GET") }
            }, completion: { result in
                switch result {
                case .success(.error(let message)): completion(.failure(.storeUnavailable("the code was not stored: \(message)")))
                case .success(let reply): then(reply)
                case .failure(let error): completion(.failure(.storeUnavailable("the code was not stored: \(error.description)")))
                }
            })
        }
        guard codes.onResend == .same else { return set(false) { _ in finish(record) } }
        set(true) { reply in
            // A code there that is live (its state a count, a tenth of its lifetime or more
            // ahead: code-issue.lua's rule) is sent again; a used, voided, locked, expiring or
            // expired one is replaced.
            guard case .bulk(let held) = reply else { return finish(record) }
            let text = String(decoding: held, as: UTF8.self)
            // One this gate's secret cannot open (sealed under a secret since changed) is
            // replaced too: the number gets a code, not 503 until that one expires.
            if let old = CodeRecord(text: Substring(text)), old.wrongChecks != nil, old.expiresAtMilliseconds > now + life / 10,
               sealer.issued(Substring(text), purpose: purpose, number: number, offered: argument, cipher: cipher) != nil {
                return finish(text)
            }
            set(false) { _ in finish(record) }
        }
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
        guard let policy = context.policy(for: purpose, else: completion) else { return }
        guard policy.rules.codes != nil, let sealer = context.codeSealer else { return completion(.failure(.codesNotIssued)) }
        let limit = policy.rules.maxFailedChecks
        guard IssuedCodes.isWellFormed(Substring(code)) else {
            return completion(.failure(.invalidField("code must be 4 to 10 digits")))
        }
        if context.configuration.testNumbers.contains(phone.e164) {
            guard let fixed = context.configuration.testCode else { return completion(.failure(.codeExpired)) }
            guard constantTimeEquals(fixed.utf8, code.utf8) else { return completion(.failure(.wrongCode(attemptsLeft: limit))) }
            return completion(.success(CodeCheck(phone: phone, purpose: purpose, testNumber: true)))
        }
        let number = context.number(phone)
        let pumping = policy.rules.pumping
        let call = ScriptCall(
            GateScripts.check, keys: context.keys, purpose: purpose, number: number, numberKeys: [.code, .cooldown, .trusted],
            arguments: { args in
                args.append(sealer.digest(code: code, purpose: purpose, number: number), limit, Int(policy.rules.lockout.wholeMilliseconds))
                args.append(pumping.isOn ? Int(pumping.trustedFor.wholeMilliseconds) : 0, Int(pumping.window.wholeMilliseconds))
                args.appendRedisNow()
                args.append(policy.rules.lockoutScope.rawValue)
            },
            decode: { reply throws(GateError) in
                let (code, value) = try reply.integerPair()
                switch code {
                case 1: break
                case 0: throw .wrongCode(attemptsLeft: value)
                case -1: throw .locked(retryAfterMilliseconds: Int64(max(1, value)))
                case -3: throw .codeLocked(retryAfterMilliseconds: Int64(max(0, value)), maxFailedChecks: limit)
                case -4: throw .codeExpired
                case -5: throw .codeUsed
                case -6: throw .codeVoided
                default: throw GateContext.unexpected(reply)
                }
                // {1, 1}: a right code that counts toward the prefix.
                return (CodeCheck(phone: phone, purpose: purpose, testNumber: false), counts: value == 1)
            })
        context.store.run(call) { answer in
            let checked = answer.map(\.0)
            // A number's right code counts toward its prefix at most once per guard window. The
            // code is used up already: its answer is `valid` whatever the count's step does (a
            // failed count is one conversion fewer, never a right code refused).
            guard pumping.isOn, case .success((_, counts: true)) = answer else { return completion(checked) }
            prefixGuard.countVerified(phone, purpose: purpose, rules: pumping) { _ in completion(checked) }
        }
    }
}

/// In the number's script: an allowed send's code (`code-issue.lua`: the live one again, or
/// the gate's new one) joins its answer and is stored (`code-write.lua`). It refuses nothing.
extension IssuedCodeRule: NumberRule {
    static let answers: [Decision.Reason] = []
    static let parts: [RuleSlot: String] = [.answer: "code-issue", .write: "code-write"]

    /// The number's code key and the new code come last (`ReserveArguments`).
    static func block(_ script: ReserveVariant) -> String {
        guard let codes = script.policy.rules.codes else { return "" }
        let life = codes.lifetime.wholeMilliseconds
        return """
            local codeKey, codeArg, codeLife, codeLifeText = KEYS[#KEYS], ARGV[#ARGV], \(life), '\(life)'
            local codeSame = \(codes.onResend == .same)

            """
    }
}
