import RedisClient

/// The reserve path on a Redis Cluster, where one script may touch
/// keys of one slot only. The number's decision stays one atomic script on the
/// number's master; what lives in other slots takes steps around it:
///
/// 1. with an `Idempotency-Key`: read the record on its own slot (`storedAnswer`: a stored
///    answer is replayed, another request's is 422);
/// 2. with a per-IP cap: take a share of the IP's cap on the IP's slot (its member is
///    the send's own nonce, so no two sends share one);
/// 3. decide the number (cooldown, ladder, max-sends) on its slot; when the IP's cap
///    refused in step 2, the number is still asked, without reserving, so the answer
///    gives the longest wait of both (with `ip_limit` in observe mode, the number decides
///    alone and the answer reports `ip_limit` observed);
/// 4. give the IP's share back if the number was refused or Redis failed; store the
///    idempotency record. (A countdown token needs no key: it names the number's slot.)
///
/// Steps 2-4 are not one transaction: a refused number briefly holds an IP share (a
/// concurrent request from that IP may be refused for it), and two concurrent retries
/// with one `Idempotency-Key` may both be decided (the number's cooldown still allows
/// only one send; the first answer stored is the one replayed).
extension GateWorker {
    func reserveOnCluster(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let number = numberHasher.keyText(for: request.phone.e164)
        let token = tokens.next()
        guard let recordKey = request.idempotencyKey.map({ keys.idempotencyRecord(idempotencyKey: $0, caller: request.caller) }) else {
            return takeIPShareThenDecide(request, policy: policy, number: number, token: token, cipher: cipher, idempotency: nil, completion: completion)
        }
        let fingerprint = fingerprint(request, number: number, address: addressKeyText(request))
        storedAnswer(request, policy: policy, cipher: cipher) { [unowned self] stored in
            if let stored { return completion(stored) }
            self.takeIPShareThenDecide(
                request, policy: policy, number: number, token: token, cipher: cipher, idempotency: (recordKey, fingerprint),
                completion: completion)
        }
    }

    private func takeIPShareThenDecide(
        _ request: SendRequest, policy: CompiledPolicy, number: String, token: CooldownNonce, cipher: CountdownTokenCipher,
        idempotency: (key: String, fingerprint: String)?, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        guard let cap = policy.rules.ipMaxSends, let address = request.clientAddress else {
            return decideNumber(request, policy: policy, number: number, token: token, cipher: cipher, ip: .none, idempotency: idempotency, completion: completion)
        }
        let ipKey = keys.ipSends(address: numberHasher.keyText(forAddress: address.text))
        // The IP's member is a nonce of its own, not the send's: the IP's set cannot be
        // joined to the number's keys.
        let member = tokens.next()
        store.evaluate(GateScripts.ipTake, slotKey: ipKey, { args in
            args.append(1)
            args.append(ipKey)
            args.append(cap)
            args.append(Int(policy.ipWindowMilliseconds))
            args.append(member.text)
            args.append(Int(self.longestIPWindowMilliseconds))
            args.appendRedisNow()
        }, completion: { [unowned self] result in
            switch result {
            case .success(.array(let items)) where items.count == 2:
                guard let taken = items[0].integer, let wait = items[1].integer else {
                    return completion(.failure(Self.unexpected(.array(items))))
                }
                let step: IPStep = taken == 1 ? .taken(key: ipKey, member: member, waitAfter: Int64(wait)) : .refused(wait: Int64(wait))
                self.decideNumber(
                    request, policy: policy, number: number, token: token, cipher: cipher, ip: step, idempotency: idempotency,
                    completion: completion)
            case .success(let reply):
                completion(.failure(Self.unexpected(reply)))
            case .failure(let error):
                completion(.failure(.storeUnavailable(error.description)))
            }
        })
    }

    /// What the IP's cap said before the number is decided.
    private enum IPStep {
        /// No cap applies.
        case none
        /// A share was taken under `member`; `waitAfter` is the IP's wait once it counts.
        case taken(key: String, member: CooldownNonce, waitAfter: Int64)
        /// The cap refuses for `wait` ms.
        case refused(wait: Int64)
    }

    private func decideNumber(
        _ request: SendRequest, policy: CompiledPolicy, number: String, token: CooldownNonce, cipher: CountdownTokenCipher, ip: IPStep,
        idempotency: (key: String, fingerprint: String)?, completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let watchesIP = policy.rules.observes(.ipLimit)
        var outsideWait: Int64 = 0
        if case .refused(let wait) = ip, !watchesIP { outsideWait = max(1, wait) }
        var script = ReserveArguments(
            keys: keys, purpose: request.purpose, number: number, nonce: token, ipAddress: nil, idempotencyKey: nil, fingerprint: nil)
        script.cluster = (linkedRecord: idempotency?.key, outsideWaitMilliseconds: outsideWait)
        store.evaluate(reserveScript(request.purpose, countingIP: false), slotKey: script.slotKey, script.write, completion: { [unowned self] result in
            var nonce: Substring = ""
            var outcome = Self.decode(result) { reply throws(GateError) in
                let decided = try Self.reserveDecision(
                    from: reply, fingerprint: nil, request: request, policy: policy, number: number, cipher: cipher)
                nonce = decided.nonce
                return decided.decision
            }
            let allowed = (try? outcome.get())?.allowed == true
            if case .taken(let ipKey, let member, _) = ip, !allowed {
                self.store.send(slotKey: ipKey, { args in
                    args.append("ZREM")
                    args.append(ipKey)
                    args.append(member.text)
                }, completion: { _ in })
            }
            if case .success(var decision) = outcome {
                // The send that filled the IP's cap: the next send from it waits for the IP too
                // (unless the cap is only observed).
                if case .taken(_, _, let waitAfter) = ip, decision.allowed, !watchesIP {
                    decision = decision.waiting(atLeast: waitAfter)
                }
                // An observed full cap took no share: the number decided alone.
                if case .refused = ip, watchesIP, !decision.replayed { decision.observed.append(.ipLimit) }
                outcome = .success(decision)
                if case .success(let answer) = outcome {
                    self.storeAnswer(answer, cooldownValue: String(nonce), idempotency: idempotency)
                }
            }
            self.awaitReplicas(for: outcome, slotKey: script.slotKey, completion: completion)
        })
    }

    /// How long a denied answer stays replayable at most (`reserve.lua` has the same).
    static let deniedAnswerLifetime: Int64 = 60_000

    /// Keeps the first answer under its `Idempotency-Key`, with the cooldown's nonce, of
    /// which a replay makes the same countdown token again.
    private func storeAnswer(
        _ decision: Decision, cooldownValue: String, idempotency: (key: String, fingerprint: String)?
    ) {
        guard let idempotency else { return }
        // A denial is kept for its wait, at most a minute, as the reserve script keeps it.
        var lifetime = configuration.idempotencyLifetime.wholeMilliseconds
        if !decision.allowed { lifetime = max(1, min(lifetime, decision.retryAfterMilliseconds, Self.deniedAnswerLifetime)) }
        store.evaluate(GateScripts.idempotencyPut, slotKey: idempotency.key, { args in
            args.append(1)
            args.append(idempotency.key)
            args.append(idempotency.fingerprint)
            args.append(Int(lifetime))
            args.append(decision.allowed ? 1 : 0)
            args.append(decision.reason?.rawValue ?? "")
            args.append(Int(decision.retryAfterMilliseconds))
            args.append(decision.sendsInWindow)
            args.append(Int(decision.nextRetryAfterMilliseconds))
            args.append(Int(decision.serverTimeMilliseconds))
            args.append(cooldownValue)
            args.append(decision.observed.map(\.rawValue).joined(separator: ","))
        }, completion: { _ in })
    }
}
