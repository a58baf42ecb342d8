import RedisClient

/// A reserve script's reply read as the request's decision (`ReserveAnswer` reads its text).
extension GateWorker {
    /// A reserve script's reply as a decision, with the nonce its token names ("" : none):
    /// the answer's text, or `{record}` when an idempotency record was already stored
    /// (replayed when it holds `fingerprint`, else the key was reused: 422).
    static func reserveDecision(
        from reply: RedisReply, fingerprint: String?, request: SendRequest, policy: CompiledPolicy, number: String,
        cipher: CountdownTokenCipher
    ) throws(GateError) -> (decision: Decision, nonce: Substring) {
        switch reply {
        case .bulk(let bytes):
            guard let answer = ReserveAnswer(answer: String(decoding: bytes, as: UTF8.self)) else { throw Self.unexpected(reply) }
            return (decision(answer, replayed: false, request: request, policy: policy, number: number, cipher: cipher), answer.nonce)
        case .array(let items) where items.count == 1:
            guard case .bulk(let record) = items[0], let fingerprint else { throw Self.unexpected(reply) }
            return try storedDecision(record, fingerprint: fingerprint, request: request, policy: policy, number: number, cipher: cipher)
        default:
            throw Self.unexpected(reply)
        }
    }

    /// A stored idempotency record as the decision to replay, when it holds `fingerprint`;
    /// another request's record (or one that cannot be read) is a reused key: 422.
    static func storedDecision(
        _ record: [UInt8], fingerprint: String, request: SendRequest, policy: CompiledPolicy, number: String,
        cipher: CountdownTokenCipher
    ) throws(GateError) -> (decision: Decision, nonce: Substring) {
        switch ReserveAnswer.record(String(decoding: record, as: UTF8.self), fingerprint: fingerprint) {
        case .answer(let answer):
            return (decision(answer, replayed: true, request: request, policy: policy, number: number, cipher: cipher), answer.nonce)
        case .otherRequest, .unreadable:
            throw .idempotencyKeyReused
        }
    }

    /// A reserve answer as the request's decision; its countdown token seals the nonce.
    static func decision(
        _ answer: ReserveAnswer, replayed: Bool, request: SendRequest, policy: CompiledPolicy, number: String,
        cipher: CountdownTokenCipher
    ) -> Decision {
        var decision = Decision(
            allowed: answer.allowed, reason: answer.reason, phone: request.phone, purpose: request.purpose,
            retryAfterMilliseconds: answer.waitMilliseconds, serverTimeMilliseconds: answer.nowMilliseconds,
            sendsInWindow: answer.sends, sendsLeft: policy.rules.maxSends.map { max(0, $0 - answer.sends) },
            nextRetryAfterMilliseconds: answer.nextMilliseconds, replayed: replayed,
            countdownToken: (CooldownValue(text: answer.nonce)?.nonce).map {
                cipher.seal(purpose: request.purpose, number: number, nonce: $0)
            })
        decision.observed = answer.observed
        return decision
    }
}
