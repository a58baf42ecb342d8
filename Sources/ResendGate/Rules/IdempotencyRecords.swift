import RedisClient

/// Idempotency records (`Idempotency-Key`): a retry gets the first answer again, consuming
/// nothing; the same key on another request is 422. On one Redis the reserve script keeps
/// the record; steps around the number's read it here first, and a cluster stores it here.
struct IdempotencyRecords {
    let context: GateContext

    /// The record's key of a request with an `Idempotency-Key`.
    func recordKey(_ request: SendRequest) -> String? {
        request.idempotencyKey.map { context.keys.idempotencyRecord(idempotencyKey: $0, caller: request.caller) }
    }

    /// The answer stored under the request's `Idempotency-Key` (a `GET` in the record's own
    /// slot), or nil when there is no key or no answer. A replay answered from it consumes
    /// nothing, is never refused by a step the first answer passed, and never reaches the
    /// number's step (where a record that ran out in between would let it decide afresh).
    func storedAnswer(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>?) -> Void
    ) {
        guard let recordKey = recordKey(request) else { return completion(nil) }
        let number = context.number(request.phone)
        let fingerprint = context.fingerprint(request, number: number)
        context.store.send(slotKey: recordKey, { $0.append("GET", recordKey) }, completion: { result in
            if case .success(.null) = result { return completion(nil) }
            completion(GateContext.decode(result) { reply throws(GateError) in
                guard case .bulk(let record) = reply else { throw GateContext.unexpected(reply) }
                return try ReserveAnswer.decision(
                    ReserveAnswer.stored(record, fingerprint: fingerprint), replayed: true, request: request, policy: policy,
                    number: number, cipher: cipher, sealer: context.codeSealer, offeredCode: nil)
            })
        })
    }

    /// On a cluster: keeps the first answer, with the cooldown's nonce (a replay's same token).
    func store(_ decision: Decision, cooldownValue: String, idempotency: (key: String, fingerprint: String)?) {
        guard let idempotency else { return }
        // Kept as long as the reserve script keeps it (idempotency-keep.lua): 1 stored, 0 kept the first.
        let record = ReserveAnswer.record(of: decision, nonce: cooldownValue, fingerprint: idempotency.fingerprint)
        let lifetime = Int(context.configuration.idempotencyLifetime.wholeMilliseconds)
        let call = ScriptCall(script: GateScripts.idempotencyPut, slotKey: idempotency.key, arguments: { args in
            args.append(1, idempotency.key, record, lifetime, decision.allowed ? 1 : 0, Int(decision.retryAfterMilliseconds))
        }, decode: { reply throws(GateError) in reply.integer == 1 })
        context.store.run(call) { _ in }
    }
}
