import RedisClient

extension GateWorker {
    /// The answer stored under the request's `Idempotency-Key` (read in the record's own
    /// slot, `idempotency-get.lua`), or nil when the request has no key or no answer is
    /// stored. The steps taken around the number's (the budgets, the pumping guard's
    /// refusal) ask it first and answer a replay from it alone: a replay consumes nothing,
    /// is never refused by a step the first answer passed, and never reaches the number's
    /// step (where a record that ran out in between would let it decide afresh).
    func storedAnswer(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>?) -> Void
    ) {
        guard let idempotencyKey = request.idempotencyKey else { return completion(nil) }
        let recordKey = keys.idempotencyRecord(idempotencyKey: idempotencyKey, caller: request.caller)
        let number = numberHasher.keyText(for: request.phone.e164)
        let fingerprint = fingerprint(request, number: number)
        store.evaluate(GateScripts.idempotencyGet, slotKey: recordKey, { args in
            args.append(1)
            args.append(recordKey)
            args.append(fingerprint)
        }, completion: { result in
            switch result {
            case .success(.array(let items)) where items.isEmpty:
                completion(nil)
            case .success(let reply):
                completion(Result { () throws(GateError) in
                    try Self.decision(from: reply, request: request, policy: policy, number: number, cipher: cipher)
                })
            case .failure(let error):
                completion(.failure(.storeUnavailable(error.description)))
            }
        })
    }
}
