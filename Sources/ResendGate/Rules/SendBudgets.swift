import RedisClient

/// Send budgets (`country_max_sends`, `max_sends_total`, `--limit`) on a Redis Cluster, where
/// their keys never share the number's slot (on one Redis: `FraudGuard`), as a step of its
/// own (`SlotStep`): take a share of each budget that counts the send (region, calling code,
/// total) under a nonce of its own, from the first of its shards with room
/// (`budget-take.lua`). A full budget refuses with its reason and the wait until its first
/// shard has room, giving back the shares taken; an observed one lets the send on, counting
/// nothing. Every share is given back (`ZREM`) unless the number allowed a new send.
///
/// Not one transaction: a share held while its number is decided may make a concurrent send
/// find the budget full (a number holds at most one at a time: `SameNumberQueue`). They
/// never let more sends through than the budget: each shard admits at most its allowance,
/// and the allowances add up to it.
struct SendBudgets: SlotStep {
    let context: GateContext

    func take(_ send: StepSend, completion: @escaping (Result<SlotShare, GateError>) -> Void) {
        let checks = BudgetCheck.checks(for: send.request, policy: send.policy.rules, context: context)
        walk(Walk(checks: checks, member: context.tokens.next())) { result in
            completion(result.map { walk in
                guard case let (check, wait, now)? = walk.full else {
                    return SlotShare(giveBack: { self.giveBack(walk) }, observed: walk.observed)
                }
                self.giveBack(walk)
                return SlotShare(answer: check.refusal(send.request, wait: wait, now: now, observed: walk.observed))
            })
        }
    }

    /// A walk over a send's budgets: one at a time, each shard from the send's first until one has room.
    private struct Walk {
        let checks: [BudgetCheck]
        let member: CooldownNonce
        /// The budget being asked, and how many of its shards were.
        var budget = 0, tried = 0
        /// Its soonest full shard's wait, counted from the first answer (Redis's clock said `now`).
        var earliest: (wait: Int64, now: Int64)?
        /// The shares taken (which shard of each budget), to give back if the send goes no further.
        var taken: [(BudgetCheck, Int)] = []
        /// The observed budgets that were full.
        var observed: [Decision.Reason] = []
        /// The budget that refuses the send, with its wait and Redis's clock; nil while none does.
        var full: (BudgetCheck, wait: Int64, now: Int64)?

        mutating func nextBudget() {
            budget += 1
            tried = 0
            earliest = nil
        }
    }

    /// Asks the shards one call each until every budget gave a share (or was observed full)
    /// or one is full; a failed call gives back what was taken.
    private func walk(_ walk: Walk, completion: @escaping (Result<Walk, GateError>) -> Void) {
        var walk = walk
        guard walk.budget < walk.checks.count else { return completion(.success(walk)) }
        let check = walk.checks[walk.budget], budget = check.budget
        guard walk.tried < budget.shards else {
            guard check.observed else {
                walk.full = (check, walk.earliest?.wait ?? 1, walk.earliest?.now ?? 0)
                return completion(.success(walk))
            }
            walk.observed.append(check.reason)
            walk.nextBudget()
            return self.walk(walk, completion: completion)
        }
        let shard = (check.firstShard(member: walk.member) + walk.tried) % budget.shards
        let key = check.key(context.keys, shard: shard)
        let member = walk.member
        // `{1, 0, now}`: taken there; `{0, wait, now}`: full for a while.
        let call = ScriptCall(script: GateScripts.budgetTake, slotKey: key, arguments: { args in
            args.append(1, key)
            args.appendRedisNow()
            args.append(member.text, Int(budget.window.wholeMilliseconds), budget.allowance(ofShard: shard))
        }, decode: { reply throws(GateError) in
            guard case .array(let items) = reply, items.count == 3, let taken = items[0].integer,
                  let wait = items[1].integer, let now = items[2].integer,
                  taken == 1 ? wait == 0 : taken == 0 && wait >= 1
            else { throw GateContext.unexpected(reply) }
            return (taken: taken == 1, wait: Int64(wait), now: Int64(now))
        })
        context.store.run(call) { step in
            switch step {
            case .success((true, _, _)):
                walk.taken.append((check, shard))
                walk.nextBudget()
            case .success(let (false, wait, now)):
                // Shards are asked one after the other: the wait counts from the first answer.
                let soonest = walk.earliest.map { min($0.wait, wait + now - $0.now) } ?? wait
                walk.earliest = (soonest, walk.earliest?.now ?? now)
                walk.tried += 1
            case .failure(let error):
                self.giveBack(walk)
                return completion(.failure(error))
            }
            self.walk(walk, completion: completion)
        }
    }

    /// Gives the shares back (`ZREM` of the send's nonce): its number refused it, or Redis failed.
    private func giveBack(_ walk: Walk) {
        for (check, shard) in walk.taken { context.giveBack(member: walk.member, of: check.key(context.keys, shard: shard)) }
    }
}
