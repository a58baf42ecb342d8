import RedisClient

/// The reserve path on a Redis Cluster, where a script touches one slot only. The number's
/// decision stays one atomic script on its slot; the rest are steps around it:
///
/// 1. with an `Idempotency-Key`: a stored answer is replayed (`storedAnswer`);
/// 2. with a per-IP cap: take a share on the IP's slot (`IPCap`);
/// 3. decide the number; when the IP's cap refused, the number is still asked, without
///    reserving, so the answer gives the longest wait of both (an observed cap: the number
///    decides alone and `ip_limit` is reported observed);
/// 4. give the IP's share back if the number refused or Redis failed; store the record.
///
/// Steps 2-4 are not one transaction: a refused number briefly holds an IP share (a
/// concurrent request from that IP may be refused for it), and two concurrent retries with
/// one `Idempotency-Key` may both be decided (the cooldown still allows one send; the first
/// answer stored is the one replayed).
extension GateWorker {
    func reserveOnCluster(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let number = context.number(request.phone)
        let token = context.tokens.next()
        let idempotency = idempotency.recordKey(request).map { (key: $0, fingerprint: context.fingerprint(request, number: number)) }
        let takeThenDecide = { [unowned self] in
            self.ipCap.take(request, policy: policy) { [unowned self] step in
                switch step {
                case .success(let step):
                    self.decideNumber(
                        request, policy: policy, number: number, token: token, cipher: cipher, ip: step, idempotency: idempotency,
                        completion: completion)
                case .failure(let error): completion(.failure(error))
                }
            }
        }
        guard idempotency != nil else { return takeThenDecide() }
        self.idempotency.storedAnswer(request, policy: policy, cipher: cipher) { stored in
            if let stored { return completion(stored) }
            takeThenDecide()
        }
    }

    private func decideNumber(
        _ request: SendRequest, policy: CompiledPolicy, number: String, token: CooldownNonce, cipher: CountdownTokenCipher,
        ip: IPCap.Step, idempotency: (key: String, fingerprint: String)?,
        completion: @escaping (Result<Decision, GateError>) -> Void
    ) {
        let watchesIP = policy.rules.observes(.ipLimit)
        var outsideWait: Int64 = 0
        if case .refused(let wait) = ip, !watchesIP { outsideWait = max(1, wait) }
        var script = ReserveArguments(
            keys: context.keys, purpose: request.purpose, number: number, nonce: token, ipAddress: nil, idempotencyKey: nil,
            fingerprint: nil)
        script.cluster = (linkedRecord: idempotency?.key, outsideWaitMilliseconds: outsideWait)
        script.code = codes.argument(policy, purpose: request.purpose, number: number)
        var lua = reserveScript(request.purpose, countingIP: false)
        // A policy without a window names its cooldown key alone while that is safe (as a
        // plain `SET NX` does): one key is never held up by a slot migration.
        if let cooldownKeyOnly = reserveScripts[request.purpose.name]?.cooldownKeyOnly,
           cooldowns.windows.plainDecisionIsSafe(for: request.purpose.name) {
            lua = cooldownKeyOnly
            script.cooldownKeyOnly = true
        }
        let call = ScriptCall(script: lua, slotKey: script.slotKey, arguments: script.write, decode: { [unowned self] reply throws(GateError) in
            try ReserveAnswer.decision(
                from: reply, fingerprint: nil, request: request, policy: policy, number: number, cipher: cipher,
                sealer: self.context.codeSealer, offeredCode: script.code)
        })
        context.store.run(call) { [unowned self] decided in
            var outcome = decided.map(\.decision)
            let nonce = (try? decided.get())?.nonce ?? ""
            if (try? outcome.get())?.allowed != true { self.ipCap.giveBack(ip) }
            if case .success(var decision) = outcome {
                // The send that filled an enforced IP cap: the next one waits for the IP too.
                if case .taken(_, _, let waitAfter) = ip, decision.allowed, !watchesIP {
                    decision = decision.waiting(atLeast: waitAfter)
                }
                // An observed full cap took no share: the number decided alone.
                if case .refused = ip, watchesIP { decision = decision.observing([.ipLimit]) }
                outcome = .success(decision)
                self.idempotency.store(decision, cooldownValue: String(nonce), idempotency: idempotency)
            }
            self.context.awaitReplicas(for: outcome, slotKey: script.slotKey, completion: completion)
        }
    }
}
