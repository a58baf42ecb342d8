import RedisClient

/// Send budgets (`country_max_sends`, `max_sends_total`) on a Redis Cluster: sends to many
/// numbers counted together, a step of their own before the number's (a budget's keys never
/// share the number's slot; on one Redis they are part of the number's script: `FraudGuard`):
///
/// 1. with an `Idempotency-Key`: a request already decided is answered from its record
///    alone (`storedAnswer`), taking no share and never reaching the number's step;
/// 2. take a share of each budget that counts the send (its region's, its calling code's,
///    then the total), under the send's own nonce, from the first of the budget's shards
///    with room (`budget-take.lua`, one call a shard). A full budget refuses the send with
///    its reason and the wait until its first shard admits one again, giving back the
///    shares taken before; an observed full budget lets the send on, counting
///    nothing (`Decision.observed`);
/// 3. decide the number (the default policy's SET, or the reserve script);
/// 4. give every share back (`ZREM`) when the number refused the send, replayed an earlier
///    answer, or Redis failed: a budget counts allowed sends only.
///
/// Steps 2-4 are not one transaction: a share held while its number is decided may make a
/// concurrent send find the budget full; a number's requests wait for each other
/// (`SameNumberQueue`), so one number holds at most one share at a time. They never let more sends through than the
/// budget: each shard admits at most its allowance, and the allowances add up to it.
final class SendBudgets {
    private let context: GateContext
    private let idempotency: IdempotencyRecords

    init(context: GateContext, idempotency: IdempotencyRecords) {
        self.context = context
        self.idempotency = idempotency
    }

    /// What the budgets made of one send.
    enum BudgetOutcome {
        /// Every budget that is not observed gave a share (`taken`: which shard of each);
        /// `observed`: the reasons of the observed budgets that were full.
        case fits(taken: [(BudgetCheck, Int)], observed: [Decision.Reason])
        /// `check`'s budget is full for `wait` ms more (Redis's clock said `now`). `taken`:
        /// the shares a cluster took before it, to give back.
        case full(BudgetCheck, wait: Int64, now: Int64, taken: [(BudgetCheck, Int)], observed: [Decision.Reason])
    }

    /// Steps 1, 2 and 4 around `next`, the rest of the decision (step 3).
    func reserve(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher, next: @escaping NextStep,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let checks = BudgetCheck.checks(for: request.phone, policy: policy.rules)
        guard !checks.isEmpty else { return next(completion) }
        let member = context.tokens.next()
        // A replay is answered from its record alone, taking no share (`storedAnswer`).
        idempotency.storedAnswer(request, policy: policy, cipher: cipher) { [unowned self] stored in
            if let stored { return completion(stored) }
            self.walkBudgets(checks, policy: policy, member: member, next: 0, taken: [], observed: []) { [unowned self] result in
                switch result {
                case .success(.fits(let taken, let observed)):
                    next { [unowned self] outcome in
                        var outcome = outcome
                        if case .success(var decision) = outcome, !decision.replayed {
                            decision.observed += observed
                            outcome = .success(decision)
                        }
                        if (try? outcome.get()).map({ !$0.allowed || $0.replayed }) ?? true { self.giveBack(taken, member: member) }
                        completion(outcome)
                    }
                case .success(.full(let check, let wait, let now, let taken, let observed)):
                    self.giveBack(taken, member: member)
                    completion(.success(check.refusal(request, wait: wait, now: now, observed: observed)))
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }
    }

    /// A cluster's budgets, one after the other.
    private func walkBudgets(
        _ checks: [BudgetCheck], policy: CompiledPolicy, member: CooldownNonce, next: Int, taken: [(BudgetCheck, Int)],
        observed: [Decision.Reason], completion: @escaping (Result<BudgetOutcome, GateError>) -> Void
    ) {
        guard next < checks.count else { return completion(.success(.fits(taken: taken, observed: observed))) }
        let check = checks[next]
        let start = check.firstShard(member: member)
        walkShards(of: check, member: member, start: start, tried: 0, earliest: nil) { [unowned self] result in
            switch result {
            case .success(.taken(let shard)):
                self.walkBudgets(
                    checks, policy: policy, member: member, next: next + 1, taken: taken + [(check, shard)],
                    observed: observed, completion: completion)
            case .success(.full) where policy.rules.observes(check.reason):
                self.walkBudgets(
                    checks, policy: policy, member: member, next: next + 1, taken: taken,
                    observed: observed + [check.reason], completion: completion)
            case .success(.full(let wait, let now)):
                completion(.success(.full(check, wait: wait, now: now, taken: taken, observed: observed)))
            case .failure(let error):
                self.giveBack(taken, member: member)
                completion(.failure(error))
            }
        }
    }

    /// One budget's answer on a cluster.
    private enum ShardStep {
        /// A share was taken in shard `shard`.
        case taken(shard: Int)
        /// Every shard is full for `wait` ms more (Redis's clock said `now`).
        case full(wait: Int64, now: Int64)
    }

    /// A cluster's walk over one budget's shards: shard `start + tried`, then the next,
    /// keeping the earliest wait.
    private func walkShards(
        of check: BudgetCheck, member: CooldownNonce, start: Int, tried: Int, earliest: (wait: Int64, now: Int64)?,
        completion: @escaping (Result<ShardStep, GateError>) -> Void
    ) {
        let budget = check.budget
        guard tried < budget.shards else {
            return completion(.success(.full(wait: earliest?.wait ?? 1, now: earliest?.now ?? 0)))
        }
        let shard = (start + tried) % budget.shards
        let key = check.key(context.keys, shard: shard)
        context.store.evaluate(GateScripts.budgetTake, slotKey: key, { args in
            args.append(1)
            args.append(key)
            args.appendRedisNow()
            args.append(member.text)
            args.append(Int(budget.window.wholeMilliseconds))
            args.append(budget.allowance(ofShard: shard))
        }, completion: { [unowned self] result in
            // `{1, 0, now}`: taken there; `{0, wait, now}`: full for a while.
            let step = GateContext.decode(result) { reply throws(GateError) in
                guard case .array(let items) = reply, items.count == 3, let taken = items[0].integer,
                      let wait = items[1].integer, let now = items[2].integer,
                      taken == 1 ? wait == 0 : taken == 0 && wait >= 1
                else { throw GateContext.unexpected(reply) }
                return (taken, Int64(wait), Int64(now))
            }
            switch step {
            case .success(let (taken, _, _)) where taken == 1:
                completion(.success(.taken(shard: shard)))
            case .success(let (_, wait, now)):
                // Shards are asked one after the other: the wait counts from the first answer.
                let waitFromFirst = earliest.map { wait + now - $0.now } ?? wait
                let soonest = earliest.map { min($0.wait, waitFromFirst) } ?? wait
                self.walkShards(
                    of: check, member: member, start: start, tried: tried + 1,
                    earliest: (soonest, earliest?.now ?? now), completion: completion)
            case .failure(let error):
                completion(.failure(error))
            }
        })
    }

    /// Gives the shares back (`ZREM` of the send's nonce): its number refused it, or Redis
    /// failed. Unanswered: a share a failed `ZREM` leaves counts until its window ends.
    private func giveBack(_ taken: [(BudgetCheck, Int)], member: CooldownNonce) {
        for (check, shard) in taken {
            let key = check.key(context.keys, shard: shard)
            context.store.send(slotKey: key, { args in
                args.append("ZREM")
                args.append(key)
                args.append(member.text)
            }, completion: { _ in })
        }
    }
}
