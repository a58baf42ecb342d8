import RedisClient

/// Send budgets (`country_max_sends`, `max_sends_total`): sends to many numbers counted
/// together, a step of their own before the number's, on one Redis and on a cluster alike
/// (a budget's keys never share the number's slot):
///
/// 1. with an `Idempotency-Key`: a request already decided is answered from its record
///    alone (`storedAnswer`), taking no share and never reaching the number's step;
/// 2. take a share of each budget that counts the send (its region's, its calling code's,
///    then the total),
///    under the send's own nonce, from the first of the budget's shards with room
///    (`budget-take.lua`); a full budget refuses the send with its reason and the wait
///    until its first shard admits one again, and gives back the shares already taken;
///    an observed full budget lets the send on, counting nothing (`Decision.observed`);
/// 3. decide the number (the default policy's SET, or the reserve script);
/// 4. give every share back (`ZREM`) when the number refused the send, replayed an earlier
///    answer, or Redis failed: a budget counts allowed sends only.
///
/// Steps 2-4 are not one transaction: a share held while its number is decided may make a
/// concurrent send find the budget full. They never let more sends through than the
/// budget: each shard admits at most its allowance, and the allowances add up to it.
extension GateWorker {
    /// One budget a send must fit in.
    struct BudgetCheck {
        let reason: Decision.Reason
        let budget: SendBudget
        /// The region (`CN`) or `total`: part of the budget's keys.
        let kind: String

        func key(_ keys: GateKeys, shard: Int) -> String {
            keys.budgetShard(scope: budget.scope, kind: kind, shard: shard)
        }
    }

    /// A budget's answer to one send.
    enum BudgetStep {
        /// A share was taken in shard `shard`.
        case taken(shard: Int)
        /// Every shard is full for `wait` ms more (Redis's clock said `now`).
        case full(wait: Int64, now: Int64)
    }

    func reserveWithinBudgets(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        var checks: [BudgetCheck] = []
        let countries = policy.rules.countryMaxSends
        if !countries.isEmpty {
            if let budget = countries[request.phone.region] {
                checks.append(BudgetCheck(reason: .countryLimit, budget: budget, kind: request.phone.region))
            }
            let callingCode = "+" + String(request.phone.countryCode)
            if let budget = countries[callingCode] { checks.append(BudgetCheck(reason: .countryLimit, budget: budget, kind: callingCode)) }
        }
        if let budget = policy.rules.maxSendsTotal { checks.append(BudgetCheck(reason: .globalLimit, budget: budget, kind: "total")) }
        guard !checks.isEmpty else { return reserveWithinBudget(request, policy: policy, cipher: cipher, completion: completion) }
        let member = tokens.next()
        // A replay is answered from its record alone, taking no share (`storedAnswer`).
        storedAnswer(request, policy: policy, cipher: cipher) { [unowned self] stored in
            if let stored { return completion(stored) }
            self.takeBudgets(
                request, policy: policy, cipher: cipher, checks: checks, next: 0, taken: [], observed: [], member: member,
                completion: completion)
        }
    }

    private func takeBudgets(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, checks: [BudgetCheck], next: Int,
        taken: [(BudgetCheck, Int)], observed: [Decision.Reason], member: CooldownNonce,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        guard next < checks.count else {
            return reserveWithinBudget(request, policy: policy, cipher: cipher) { [unowned self] outcome in
                var outcome = outcome
                if case .success(var decision) = outcome, !decision.replayed {
                    decision.observed += observed
                    outcome = .success(decision)
                }
                if (try? outcome.get()).map({ !$0.allowed || $0.replayed }) ?? true { self.giveBack(taken, member: member) }
                completion(outcome)
            }
        }
        let check = checks[next]
        takeShare(of: check, member: member) { [unowned self] result in
            switch result {
            case .success(.taken(let shard)):
                self.takeBudgets(
                    request, policy: policy, cipher: cipher, checks: checks, next: next + 1, taken: taken + [(check, shard)],
                    observed: observed, member: member, completion: completion)
            case .success(.full) where policy.rules.observes(check.reason):
                self.takeBudgets(
                    request, policy: policy, cipher: cipher, checks: checks, next: next + 1, taken: taken,
                    observed: observed + [check.reason], member: member, completion: completion)
            case .success(.full(let wait, let now)):
                self.giveBack(taken, member: member)
                var refusal = Decision(
                    allowed: false, reason: check.reason, phone: request.phone, purpose: request.purpose,
                    retryAfterMilliseconds: wait, serverTimeMilliseconds: now, sendsInWindow: 0)
                refusal.observed = observed
                completion(.success(refusal))
            case .failure(let error):
                self.giveBack(taken, member: member)
                completion(.failure(error))
            }
        }
    }

    /// Takes a share of `check`'s budget, starting at the shard the nonce picks: on one
    /// Redis one script call over all shards, on a cluster one call a shard (each has its
    /// slot) until one has room or all were full.
    func takeShare(of check: BudgetCheck, member: CooldownNonce, completion: @escaping (Result<BudgetStep, GateError>) -> Void) {
        let budget = check.budget
        let start = Int(member.bytes[0]) % budget.shards
        if store.isCluster { return takeShare(of: check, member: member, start: start, tried: 0, earliest: nil, completion: completion) }
        let keys = self.keys
        store.evaluate(GateScripts.budgetTake, slotKey: check.key(keys, shard: start), { args in
            args.append(budget.shards)
            for place in 0..<budget.shards {
                keys.appendBudgetShard(scope: budget.scope, kind: check.kind, shard: (start + place) % budget.shards, to: &args)
            }
            args.append(Int(budget.window.wholeMilliseconds))
            args.append(member.text)
            for place in 0..<budget.shards { args.append(budget.allowance(ofShard: (start + place) % budget.shards)) }
        }, completion: { result in
            completion(Self.decode(result) { reply throws(GateError) in
                let (place, wait, now) = try Self.budgetReply(reply)
                return place > 0 ? .taken(shard: (start + place - 1) % budget.shards) : .full(wait: wait, now: now)
            })
        })
    }

    /// The cluster's walk: shard `start + tried`, then the next, keeping the earliest wait.
    private func takeShare(
        of check: BudgetCheck, member: CooldownNonce, start: Int, tried: Int, earliest: (wait: Int64, now: Int64)?,
        completion: @escaping (Result<BudgetStep, GateError>) -> Void
    ) {
        let budget = check.budget
        guard tried < budget.shards else {
            return completion(.success(.full(wait: earliest?.wait ?? 1, now: earliest?.now ?? 0)))
        }
        let shard = (start + tried) % budget.shards
        let key = check.key(keys, shard: shard)
        store.evaluate(GateScripts.budgetTake, slotKey: key, { args in
            args.append(1)
            args.append(key)
            args.append(Int(budget.window.wholeMilliseconds))
            args.append(member.text)
            args.append(budget.allowance(ofShard: shard))
        }, completion: { [unowned self] result in
            let step = Self.decode(result) { reply throws(GateError) in try Self.budgetReply(reply) }
            switch step {
            case .success(let (place, _, _)) where place > 0:
                completion(.success(.taken(shard: shard)))
            case .success(let (_, wait, now)):
                // Shards are asked one after the other: the wait counts from the first answer.
                let waitFromFirst = earliest.map { wait + now - $0.now } ?? wait
                let soonest = earliest.map { min($0.wait, waitFromFirst) } ?? wait
                self.takeShare(
                    of: check, member: member, start: start, tried: tried + 1,
                    earliest: (soonest, earliest?.now ?? now), completion: completion)
            case .failure(let error):
                completion(.failure(error))
            }
        })
    }

    /// `{place, wait, now}` from `budget-take.lua`.
    private static func budgetReply(_ reply: RedisReply) throws(GateError) -> (Int, Int64, Int64) {
        guard case .array(let items) = reply, items.count == 3, let place = items[0].integer,
              let wait = items[1].integer, let now = items[2].integer else { throw unexpected(reply) }
        return (place, Int64(wait), Int64(now))
    }

    /// Gives the shares back (`ZREM` of the send's nonce): its number refused it, or Redis
    /// failed. Unanswered: a share a failed `ZREM` leaves counts until its window ends.
    private func giveBack(_ taken: [(BudgetCheck, Int)], member: CooldownNonce) {
        for (check, shard) in taken {
            let key = check.key(keys, shard: shard)
            store.send(slotKey: key, { args in
                args.append("ZREM")
                args.append(key)
                args.append(member.text)
            }, completion: { _ in })
        }
    }
}
