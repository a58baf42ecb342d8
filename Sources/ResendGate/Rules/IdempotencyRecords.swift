import RedisClient

/// Idempotency records (`Idempotency-Key`): a retry gets the first answer again, consuming
/// nothing; the same key on another request is 422. On one Redis the reserve script keeps
/// the record; on a Cluster it lives in a slot of its own and is the first step (`SlotStep`).
struct IdempotencyRecords: SlotStep {
    let context: GateContext

    /// The record's key of a request with an `Idempotency-Key`.
    func recordKey(_ request: SendRequest) -> String? {
        request.idempotencyKey.map { context.keys.idempotencyRecord(idempotencyKey: $0, caller: request.caller) }
    }

    /// Answers a replay from its record (a `GET` in the record's own slot), before any other
    /// step: a replay consumes nothing, is never refused by a step the first answer passed,
    /// and never reaches the number (where a record that ran out in between would let it
    /// decide afresh). Any other send goes on, its record linked in its cooldown (a refund
    /// voids it) and stored once the number answered (`store`).
    func take(_ send: StepSend, completion: @escaping (Result<SlotShare, GateError>) -> Void) {
        guard let recordKey = recordKey(send.request) else { return completion(.success(SlotShare())) }
        let context = context, fingerprint = context.fingerprint(send.request, number: send.number)
        context.store.send(slotKey: recordKey, { $0.append("GET", recordKey) }, completion: { result in
            guard case .success(.null) = result else {
                return completion(GateContext.decode(result) { reply throws(GateError) in
                    guard case .bulk(let record) = reply else { throw GateContext.unexpected(reply) }
                    return try SlotShare(answer: ReserveAnswer.decision(
                        ReserveAnswer.stored(record, fingerprint: fingerprint), replayed: true, send: send, sealer: context.codeSealer,
                        offeredCode: nil))
                })
            }
            send.linkedRecord = recordKey
            // The number's answer only: a step's refusal keeps no record, as on one Redis.
            completion(.success(SlotShare(then: { decision in
                if let nonce = send.cooldownValue { store(decision, nonce: String(nonce), key: recordKey, fingerprint: fingerprint) }
            })))
        })
    }

    /// Keeps the first answer, with the cooldown's nonce (a replay's same token).
    private func store(_ decision: Decision, nonce: String, key: String, fingerprint: String) {
        // Kept as long as the reserve script keeps it (idempotency-keep.lua): 1 stored, 0 kept the first.
        let record = ReserveAnswer.record(of: decision, nonce: nonce, fingerprint: fingerprint)
        let lifetime = Int(context.configuration.idempotencyLifetime.wholeMilliseconds)
        let call = ScriptCall(script: GateScripts.idempotencyPut, slotKey: key, arguments: { args in
            args.append(1, key, record, lifetime, decision.allowed ? 1 : 0, Int(decision.retryAfterMilliseconds))
        }, decode: { reply throws(GateError) in reply.integer == 1 })
        context.store.run(call) { _ in }
    }
}
