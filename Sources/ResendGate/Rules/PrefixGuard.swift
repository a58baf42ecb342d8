import RedisClient

/// The SMS-pumping guard on a Redis Cluster (`pumping.lua`; on one Redis: `FraudGuard`). A
/// prefix's counts live in a slot of their own (`rg:pump:{purpose:+447911}`), so the guard
/// is a step of its own (`SlotStep`), `take` on the prefix's slot: it judges the prefix and,
/// when it is not blocked, counts the send at once (so concurrent sends see each other),
/// given back (`give`, not awaited) unless the number allowed a new send. A blocked prefix
/// refuses with `suspected_pumping`, but a number trusted within `trustedFor` (its
/// `trusted` key, read only then) decides as usual, its allowed send counted (`force`); an
/// observed guard lets the send on as a trusted one's, with `suspected_pumping` observed.
///
/// A `verified` outcome counts in the prefix too (`countVerified`); a blocked prefix goes
/// into `PrefixRegistry`.
final class PrefixGuard: SlotStep {
    private let context: GateContext
    let registry: PrefixRegistry

    init(context: GateContext) {
        self.context = context
        registry = PrefixRegistry(context: context)
    }

    func take(_ send: StepSend, completion: @escaping (Result<SlotShare, GateError>) -> Void) {
        let purpose = send.request.purpose, rules = send.policy.rules.pumping
        let prefix = PrefixKey(send.request.phone, digits: rules.prefixDigits)
        registry.step("take", purpose: purpose, prefix: prefix, rules: rules) { [unowned self] result in
            guard case .success(let step) = result else { return completion(result.map { _ in SlotShare() }) }
            guard step.figures.blocked else {
                return completion(.success(SlotShare(giveBack: {
                    self.registry.step("give", purpose: purpose, prefix: prefix, rules: rules, field: step.countedField) { _ in }
                })))
            }
            self.refusal(step.figures, request: send.request, policy: send.policy) { verdict in
                completion(verdict.map { refusal in
                    if let refusal, !send.policy.rules.observes(.suspectedPumping) { return SlotShare(answer: refusal) }
                    return SlotShare(observed: refusal == nil ? [] : [.suspectedPumping], then: { decision in
                        if decision.isNewSend { self.registry.step("force", purpose: purpose, prefix: prefix, rules: rules) { _ in } }
                    })
                })
            }
        }
    }

    /// The one place that decides the guard's refusal of a send to a blocked prefix
    /// (`suspected_pumping` until it is free); nil for a trusted number (see above).
    private func refusal(
        _ figures: PrefixFigures, request: SendRequest, policy: CompiledPolicy,
        completion: @escaping (Result<Decision?, GateError>) -> Void
    ) {
        let number = context.number(request.phone)
        let keys = context.keys
        context.store.send(slotKey: keys.slotKey(purpose: request.purpose, number: number), { args in
            args.append("EXISTS")
            keys.append(.trusted, purpose: request.purpose, number: number, to: &args)
        }, completion: { result in
            completion(GateContext.decode(result) { reply throws(GateError) -> Decision? in
                guard let count = reply.integer else { throw GateContext.unexpected(reply) }
                if count > 0 { return nil }
                return policy.refusal(
                    request, by: .suspectedPumping, wait: figures.retryAfterMilliseconds, now: figures.serverTimeMilliseconds)
            })
        })
    }

    /// Counts a `verified` outcome in the prefix before answering, so a later send sees it.
    func countVerified(_ phone: PhoneNumber, purpose: Purpose, rules: PumpingGuard, completion: @escaping (Result<Void, GateError>) -> Void) {
        registry.step("verified", purpose: purpose, prefix: PrefixKey(phone, digits: rules.prefixDigits), rules: rules) { counted in
            completion(counted.map { _ in () })
        }
    }
}

/// What one call of `pumping.lua` found and did.
struct PumpingStep {
    let figures: PrefixFigures
    /// True when the prefix should be (re)written into the registry of blocked prefixes.
    let register: Bool
    /// The field the send was counted in ("" when it was not), for a `give`.
    let countedField: String

    /// `pumping.lua`'s reply.
    init(_ reply: RedisReply, purpose: Purpose, prefix: PrefixKey) throws(GateError) {
        guard case .array(let items) = reply, items.count == 8, let blocked = items[0].integer, let sends = items[1].integer,
              let verified = items[2].integer, let wait = items[3].integer, let since = items[4].integer,
              let now = items[5].integer, let register = items[6].integer
        else { throw GateContext.unexpected(reply) }
        figures = PrefixFigures(
            purpose: purpose, prefix: prefix, blocked: blocked == 1, sends: sends, verifications: verified,
            retryAfterMilliseconds: Int64(wait), blockedSinceMilliseconds: since > 0 ? Int64(since) : nil,
            serverTimeMilliseconds: Int64(now))
        self.register = register == 1
        countedField = items[7].string ?? ""
    }
}
