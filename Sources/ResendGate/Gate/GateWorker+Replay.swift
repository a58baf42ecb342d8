import RedisClient

extension GateWorker {
    /// The answer stored under the request's `Idempotency-Key` (a `GET` in the record's
    /// own slot, read by `ReserveAnswer`), or nil when the request has no key or no answer
    /// is stored. The steps taken around the number's (the budgets, the pumping guard's
    /// refusal, a cluster's IP share) ask it first and answer a replay from it alone: a
    /// replay consumes nothing, is never refused by a step the first answer passed, and
    /// never reaches the number's step (where a record that ran out in between would let
    /// it decide afresh).
    func storedAnswer(
        _ request: SendRequest, policy: CompiledPolicy, cipher: CountdownTokenCipher,
        completion: @escaping (Result<Decision, GateError>?) -> Void
    ) {
        guard let idempotencyKey = request.idempotencyKey else { return completion(nil) }
        let recordKey = keys.idempotencyRecord(idempotencyKey: idempotencyKey, caller: request.caller)
        let number = numberHasher.keyText(for: request.phone.e164)
        let fingerprint = fingerprint(request, number: number, address: addressKeyText(request))
        store.send(slotKey: recordKey, { args in
            args.append("GET")
            args.append(recordKey)
        }, completion: { result in
            switch result {
            case .success(.null):
                completion(nil)
            case .success(.bulk(let record)):
                completion(Result { () throws(GateError) in
                    try Self.storedDecision(
                        record, fingerprint: fingerprint, request: request, policy: policy, number: number, cipher: cipher
                    ).decision
                })
            case .success(let reply):
                completion(.failure(Self.unexpected(reply)))
            case .failure(let error):
                completion(.failure(.storeUnavailable(error.description)))
            }
        })
    }
}
